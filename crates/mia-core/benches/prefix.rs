//! Prompt-prefix reuse (issue 21). Not a test: prints figures.
//!
//! Replays a scripted 20-step session (two turns) against the mock
//! Anthropic server and measures, for every request, how many of its bytes
//! repeat the previous request's prefix in the order a provider caches
//! them: system prompt, tool definitions, then the messages. Those bytes
//! are what a provider bills as cache reads; the rest as cache writes.
//! Baseline in the same run: the same requests if the system prompt changed
//! on every step (as it did when it carried the time and a re-rendered
//! permission summary).
//!
//! Run: `cargo bench -p mia-core --bench prefix`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use mia_config::Paths;
use mia_core::{OpResult, Runtime, RuntimeOptions};
use mia_protocol::{Event, Op, TurnEnd};
use mia_providers::credentials::{Credentials, FileStore};
use mia_testkit::{MockServer, RecordedRequest, Scenario};
use serde_json::{Value, json};

/// Anthropic's `cache_control` markers say where to cache, they are not
/// content: the breakpoint moves to the newest message on every request.
fn strip_markers(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), strip_markers(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_markers).collect()),
        other => other.clone(),
    }
}

/// The request in cache order, as byte chunks.
fn chunks(r: &RecordedRequest) -> Vec<String> {
    let body = strip_markers(&r.body);
    let mut out = vec![body["system"].to_string(), body["tools"].to_string()];
    for m in body["messages"].as_array().into_iter().flatten() {
        out.push(m.to_string());
    }
    out
}

/// Bytes of `cur` that repeat `prev`'s prefix (chunk by chunk, then bytes).
fn shared_prefix(prev: &[String], cur: &[String], skip_system: bool) -> usize {
    let mut n = 0;
    for (i, (a, b)) in prev.iter().zip(cur).enumerate() {
        if skip_system && i == 0 {
            // A system prompt that changes each step breaks the prefix at once.
            return 0;
        }
        if a == b {
            n += b.len();
        } else {
            n += a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            break;
        }
    }
    n
}

async fn turn(runtime: &Runtime, session: mia_protocol::SessionId, text: &str) {
    let mut events = runtime.subscribe();
    runtime
        .submit(Op::UserMessage {
            session_id: session,
            text: text.into(),
            agent: None,
            model: None,
        })
        .await
        .unwrap();
    loop {
        if let Event::TurnFinished { end, .. } = events.recv().await.unwrap() {
            assert_eq!(end, TurnEnd::Completed);
            return;
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut steps: Vec<Value> = Vec::new();
    for i in 0..19 {
        let matcher = if i == 0 {
            json!({"last_message_contains": "build it"})
        } else {
            json!({"has_tool_result": format!("c{}", i - 1)})
        };
        let (name, args) = if i % 3 == 2 {
            ("read", json!({"path": format!("src/f{}.txt", i - 1)}))
        } else {
            (
                "write",
                json!({"path": format!("src/f{i}.txt"), "content": format!("file {i}\n").repeat(20)}),
            )
        };
        steps.push(json!({"match": matcher, "response": {"events": [
            {"text": format!("Step {i}.")},
            {"tool_call": {"id": format!("c{i}"), "name": name, "arguments": args}}
        ]}}));
    }
    steps.push(
        json!({"match": {"has_tool_result": "c18"}, "response": {"events": [{"text": "Done."}]}}),
    );
    steps.push(json!({"match": {"last_message_contains": "and now"}, "response": {"events": [{"text": "Sure."}]}}));
    let scenario: Scenario = serde_json::from_value(json!({ "steps": steps })).unwrap();
    let server = MockServer::start(scenario).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        json!({
            "model": "anthropic/claude-sonnet-4-5",
            "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "k"}},
            "unifier": {"enabled": false}
        })
        .to_string(),
    )
    .unwrap();
    let paths = Paths::new(home.join(".mia-code"), home.clone(), &home.join(".config"));
    let mut opts = RuntimeOptions::new(paths.clone());
    opts.interactive = false;
    opts.credentials = Arc::new(Credentials::new(
        Arc::new(|_: &str| None),
        None,
        FileStore::in_home(&paths.home),
    ));
    let (runtime, _) = Runtime::open(opts).unwrap();
    let OpResult::Session(s) = runtime
        .submit(Op::CreateSession {
            directory: project.display().to_string(),
            title: None,
            agent: Some("build".into()),
            model: None,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    turn(&runtime, s.id, "build it").await;
    turn(&runtime, s.id, "and now a question").await;
    server.assert_no_violations();

    let requests = server.requests();
    let all: Vec<Vec<String>> = requests.iter().map(chunks).collect();
    let (mut total, mut reused, mut baseline, mut appended) = (0usize, 0usize, 0usize, 0usize);
    for w in all.windows(2) {
        let size: usize = w[1].iter().map(String::len).sum();
        total += size;
        // What no cache could hold: the messages this request adds.
        appended += w[1].iter().skip(w[0].len()).map(String::len).sum::<usize>();
        reused += shared_prefix(&w[0], &w[1], false);
        baseline += shared_prefix(&w[0], &w[1], true);
    }
    let pct = |n: usize| 100.0 * n as f64 / total.max(1) as f64;
    println!(
        "{} requests over 2 turns; {} bytes sent after the first request",
        requests.len(),
        total
    );
    println!(
        "  repeat the previous request's prefix: {:.2}% ({} bytes as cache reads, {} as cache writes)",
        pct(reused),
        reused,
        total - reused
    );
    println!(
        "  of the bytes a cache could hold (all but the {} bytes of new messages): {:.2}% reused",
        appended,
        100.0 * reused as f64 / (total - appended).max(1) as f64
    );
    println!(
        "  baseline, a system prompt that changes every step: {:.2}% reused ({} bytes)",
        pct(baseline),
        baseline
    );
}
