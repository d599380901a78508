//! Runtime overhead benchmark. Not a test: prints figures and ratios.
//!
//! - Per streamed token: a turn streaming N text chunks from the mock server
//!   through the runtime to an Event subscriber, against the provider client
//!   alone draining the same stream (baseline, same run).
//! - Tool dispatch: K steps each calling a tool, against the same K model
//!   requests without the runtime (baseline); the difference per call is the
//!   runtime's permission + store (+ snapshot) bookkeeping plus the tool itself,
//!   whose own cost is measured separately and subtracted.
//!
//! Run: `cargo bench -p mia-core --bench runtime`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mia_config::Paths;
use mia_core::{OpResult, Runtime, RuntimeOptions, StoreHandle};
use mia_protocol::{Event, Op, TurnEnd};
use mia_providers::credentials::{Credentials, FileStore};
use mia_providers::{ChatMessage, ChatRequest, ProviderConfig, build_provider, collect};
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TOKENS: usize = 20_000;
const CALLS: usize = 40;

struct Env {
    _dir: tempfile::TempDir,
    runtime: Runtime,
    project: std::path::PathBuf,
}

async fn env(server: &MockServer) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        json!({
            "model": "openai/gpt-5",
            "providers": {"openai": {"baseURL": server.openai_base_url(), "apiKey": "k"}},
            "unifier": {"enabled": false}
        })
        .to_string(),
    )
    .unwrap();
    let paths = Paths::new(home.join(".mia-code"), home.clone(), &home.join(".config"));
    let store = StoreHandle::spawn(mia_store::SessionDb::open(paths.data_db()).unwrap()).unwrap();
    let mut opts = RuntimeOptions::new(paths.clone());
    opts.interactive = false;
    opts.credentials = Arc::new(Credentials::new(
        Arc::new(|_: &str| None),
        None,
        FileStore::in_home(&paths.home),
    ));
    Env {
        _dir: dir,
        runtime: Runtime::new(opts, store),
        project: project.canonicalize().unwrap(),
    }
}

async fn run_turn(env: &Env, text: &str) -> (Duration, usize) {
    let mut events = env.runtime.subscribe();
    let OpResult::Session(s) = env
        .runtime
        .submit(Op::CreateSession {
            directory: env.project.display().to_string(),
            title: None,
            agent: Some("build".into()),
            model: None,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    let start = Instant::now();
    env.runtime
        .submit(Op::UserMessage {
            session_id: s.id,
            text: text.into(),
            agent: None,
            model: None,
        })
        .await
        .unwrap();
    let mut deltas = 0;
    loop {
        match events.recv().await.unwrap() {
            Event::TextDelta { .. } => deltas += 1,
            Event::TurnFinished { end, .. } => {
                assert_eq!(end, TurnEnd::Completed);
                return (start.elapsed(), deltas);
            }
            _ => {}
        }
    }
}

async fn provider_only(server: &MockServer, requests: usize, tool_result: bool) -> Duration {
    let provider = build_provider(
        ProviderConfig::new("openai")
            .with_base_url(server.openai_base_url())
            .with_api_key("k"),
    )
    .unwrap();
    let start = Instant::now();
    for i in 0..requests {
        let mut messages = vec![ChatMessage::user("go")];
        if tool_result && i > 0 {
            messages = vec![ChatMessage::user(format!("baseline {i}"))];
        }
        let c = collect(provider.stream(
            ChatRequest::new("gpt-5", messages),
            CancellationToken::new(),
        ))
        .await
        .unwrap();
        std::hint::black_box(c);
    }
    start.elapsed()
}

fn scenario(steps: Value) -> Scenario {
    serde_json::from_value(json!({ "steps": steps })).unwrap()
}

fn per(d: Duration, n: usize) -> String {
    let us = d.as_secs_f64() * 1e6 / n as f64;
    if us < 1000.0 {
        format!("{us:.1} µs")
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // ---- per streamed token
    let chunks: Vec<Value> = (0..TOKENS)
        .map(|i| json!({"text": format!("tok{i} ")}))
        .collect();
    let stream_steps = json!([
        {"match": {"last_message_contains": "stream"}, "times": 5, "response": {"events": chunks}},
        {"match": {"last_message_contains": "go"}, "times": 5, "response": {"events": chunks}}
    ]);
    let server = MockServer::start(scenario(stream_steps)).await.unwrap();
    let env1 = env(&server).await;
    let mut ours = Vec::new();
    let mut base = Vec::new();
    let mut deltas = 0;
    for _ in 0..5 {
        base.push(provider_only(&server, 1, false).await);
        let (d, n) = run_turn(&env1, "stream please").await;
        ours.push(d);
        deltas = n;
    }
    ours.sort();
    base.sort();
    let (ours, base) = (ours[2], base[2]);
    println!("streaming {TOKENS} text chunks over loopback HTTP/SSE (median of 5):");
    println!(
        "  provider client alone (baseline)   {:>10.1} ms   {} per chunk",
        base.as_secs_f64() * 1e3,
        per(base, TOKENS)
    );
    println!(
        "  through the runtime to a subscriber {:>9.1} ms   {} per chunk",
        ours.as_secs_f64() * 1e3,
        per(ours, TOKENS)
    );
    println!(
        "  runtime overhead per chunk: {}  (ratio runtime/baseline {:.2}×; {deltas} batched TextDelta events for {TOKENS} chunks)",
        per(ours.saturating_sub(base), TOKENS),
        ours.as_secs_f64() / base.as_secs_f64()
    );

    // ---- tool dispatch
    // Arguments differ per call: identical calls in a row trip the doom-loop guard.
    type ArgsFor = fn(usize) -> Value;
    let cases: [(&str, ArgsFor); 2] = [
        (
            "todo",
            |i| json!({"action": "create", "items": [format!("item {i}")]}),
        ),
        (
            "write",
            |i| json!({"path": "f.txt", "content": format!("hello {i}\n")}),
        ),
    ];
    for (tool, args_for) in cases {
        let mut steps: Vec<Value> = Vec::new();
        steps.push(
            json!({"match": {"last_message_contains": "dispatch"}, "response": {"events": [
            {"tool_call": {"id": "c0", "name": tool, "arguments": args_for(0)}}]}}),
        );
        for i in 1..CALLS {
            steps.push(
                json!({"match": {"has_tool_result": format!("c{}", i - 1)}, "response": {"events": [
                {"tool_call": {"id": format!("c{i}"), "name": tool, "arguments": args_for(i)}}]}}),
            );
        }
        steps.push(json!({"match": {"has_tool_result": format!("c{}", CALLS - 1)}, "response": {"events": [{"text": "done"}]}}));
        steps.push(json!({"match": {}, "times": CALLS + 1, "response": {"events": [{"text": "baseline"}]}}));
        let server = MockServer::start(scenario(Value::Array(steps)))
            .await
            .unwrap();
        let env2 = env(&server).await;
        let (ours, _) = run_turn(&env2, "dispatch").await;
        let base = provider_only(&server, CALLS + 1, true).await;
        // The tool's own work, measured directly.
        let ctx = mia_tools::ToolContext::new(env2.project.clone());
        let registry = mia_tools::ToolRegistry::builtin();
        let t = Instant::now();
        for i in 0..CALLS {
            registry
                .get(tool)
                .unwrap()
                .run(args_for(i), &ctx)
                .await
                .unwrap();
        }
        let own = t.elapsed();
        let overhead = ours.saturating_sub(base).saturating_sub(own);
        println!("\n{CALLS} steps calling `{tool}`:");
        println!(
            "  model requests alone (baseline)   {:>8.1} ms",
            base.as_secs_f64() * 1e3
        );
        println!(
            "  the tool's own work               {:>8.1} ms",
            own.as_secs_f64() * 1e3
        );
        println!(
            "  the turn through the runtime      {:>8.1} ms",
            ours.as_secs_f64() * 1e3
        );
        println!(
            "  dispatch overhead per call: {}  (permission, store writes{}, events; ratio turn/baseline {:.2}×)",
            per(overhead, CALLS),
            if tool == "write" {
                ", snapshot before/after"
            } else {
                ""
            },
            ours.as_secs_f64() / base.as_secs_f64()
        );
    }
}
