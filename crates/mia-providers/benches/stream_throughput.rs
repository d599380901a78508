//! Stream parsing throughput per provider client, and the cost of the retry
//! path. Not a test: prints figures and ratios against baselines measured in
//! the same run.
//!
//! - baseline A (`decode only`): the provider's SSE body decoded in memory
//!   (`decode_sse_body`), no HTTP;
//! - `over HTTP`: the real client against the mock server on loopback at
//!   full speed (no delays), same body; ratio = HTTP time / decode-only time;
//! - retry path: a request answered after N 503s with zero backoff vs a
//!   request answered at once; ratio = retried / direct.
//!
//! Run: `cargo bench -p mia-providers --bench stream_throughput`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mia_providers::{
    CancellationToken, ChatMessage, ChatRequest, ClientOptions, ProviderConfig, ProviderKind,
    RetryPolicy, StreamEvent, build_provider, decode_sse_body,
};
use mia_testkit::render::{Chunk, render};
use mia_testkit::{ApiKind, EventSpec, MockServer, Response, Scenario, Step, ToolCallSpec};

const TEXT_EVENTS: usize = 20_000;
const TOOL_CALLS: usize = 200;
const ROUNDS: usize = 5;

fn response() -> Response {
    let mut events = Vec::with_capacity(TEXT_EVENTS + TOOL_CALLS);
    for i in 0..TEXT_EVENTS {
        events.push(EventSpec::Text(format!("token {i:05} ")));
    }
    for i in 0..TOOL_CALLS {
        events.push(EventSpec::ToolCall(ToolCallSpec {
            id: Some(format!("call_{i}")),
            name: "edit".into(),
            arguments: serde_json::json!({"path": format!("src/file_{i}.rs"), "old": "a".repeat(64), "new": "b".repeat(64)}),
            chunks: Some(8),
        }));
    }
    Response {
        events,
        ..Response::default()
    }
}

fn api(kind: ProviderKind) -> ApiKind {
    match kind {
        ProviderKind::Anthropic => ApiKind::Anthropic,
        ProviderKind::OpenAi => ApiKind::OpenAi,
        ProviderKind::Google => ApiKind::Google,
    }
}

fn body(kind: ProviderKind, resp: &Response) -> Vec<u8> {
    let mut out = Vec::new();
    for c in render(api(kind), resp, "bench-model", true) {
        if let Chunk::Bytes(b) = c {
            out.extend_from_slice(&b);
        }
    }
    out
}

fn model(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "claude-sonnet-4-20250514",
        ProviderKind::OpenAi => "gpt-4.1",
        ProviderKind::Google => "gemini-2.5-flash",
    }
}

fn id(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::OpenAi => "openai",
        ProviderKind::Google => "google",
    }
}

fn base(kind: ProviderKind, s: &MockServer) -> String {
    match kind {
        ProviderKind::Anthropic => s.anthropic_base_url(),
        ProviderKind::OpenAi => s.openai_base_url(),
        ProviderKind::Google => s.gemini_base_url(),
    }
}

fn options(zero_backoff: bool) -> ClientOptions {
    let mut o = ClientOptions::default();
    if zero_backoff {
        o.retry = RetryPolicy {
            base: Duration::ZERO,
            cap: Duration::ZERO,
            slow_base: Duration::ZERO,
            slow_cap: Duration::ZERO,
            jitter: 0.0,
            ..RetryPolicy::default()
        };
    }
    o
}

async fn one_request(kind: ProviderKind, server: &MockServer, opts: ClientOptions) -> usize {
    let provider = build_provider(
        ProviderConfig::new(id(kind))
            .with_base_url(base(kind, server))
            .with_api_key("bench")
            .with_options(opts),
    )
    .unwrap();
    let mut stream = provider.stream(
        ChatRequest::new(model(kind), vec![ChatMessage::user("go")]),
        CancellationToken::new(),
    );
    let mut n = 0;
    while let Some(item) = stream.next().await {
        let event = item.unwrap();
        if !matches!(event, StreamEvent::Retrying { .. }) {
            n += 1;
        }
    }
    n
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!(
        "# mia-providers stream throughput ({TEXT_EVENTS} text deltas + {TOOL_CALLS} tool calls x 8 fragments, median of {ROUNDS})"
    );
    let resp = response();
    for kind in [
        ProviderKind::Anthropic,
        ProviderKind::OpenAi,
        ProviderKind::Google,
    ] {
        let bytes = body(kind, &resp);
        let mb = bytes.len() as f64 / 1e6;

        // Baseline: decode only.
        let mut times = Vec::new();
        let mut events = 0;
        for _ in 0..ROUNDS {
            let t = Instant::now();
            events = decode_sse_body(kind, &bytes).unwrap().len();
            times.push(t.elapsed());
        }
        let decode = median(times);

        // Over HTTP against the mock.
        let scenario = Scenario {
            name: None,
            steps: vec![Step {
                times: ROUNDS as u32,
                ..Step::reply(resp.clone())
            }],
        };
        let server = MockServer::start(scenario).await.unwrap();
        let mut times = Vec::new();
        let mut http_events = 0;
        for _ in 0..ROUNDS {
            let t = Instant::now();
            http_events = one_request(kind, &server, options(false)).await;
            times.push(t.elapsed());
        }
        let http = median(times);
        assert_eq!(server.violations(), Vec::<String>::new());
        let secs = |d: Duration| d.as_secs_f64();
        println!(
            "{:<9} body {:.2} MB, {} events | decode only: {:>9.0} events/s {:>7.1} MB/s ({:.1} ms) | over HTTP: {:>9.0} events/s {:>7.1} MB/s ({:.1} ms, {:.2} µs/event) | HTTP/decode-only = {:.2}x",
            id(kind),
            mb,
            events,
            events as f64 / secs(decode),
            mb / secs(decode),
            secs(decode) * 1e3,
            http_events as f64 / secs(http),
            mb / secs(http),
            secs(http) * 1e3,
            secs(http) * 1e6 / http_events as f64,
            secs(http) / secs(decode),
        );
    }

    // Retry path: N x 503 then a short success, zero backoff, vs direct.
    println!("# retry path (short response, zero backoff, median of 21)");
    let short = Response {
        events: vec![EventSpec::Text("ok".into())],
        ..Response::default()
    };
    for kind in [
        ProviderKind::Anthropic,
        ProviderKind::OpenAi,
        ProviderKind::Google,
    ] {
        let mut line = format!("{:<9}", id(kind));
        let mut direct_time = Duration::ZERO;
        for failures in [0u32, 1, 4] {
            let mut times = Vec::new();
            for _ in 0..21 {
                let mut steps = Vec::new();
                if failures > 0 {
                    steps.push(Step {
                        times: failures,
                        ..Step::reply(Response {
                            status: 503,
                            ..Response::default()
                        })
                    });
                }
                steps.push(Step::reply(short.clone()));
                let server = MockServer::start(Scenario { name: None, steps })
                    .await
                    .unwrap();
                let t = Instant::now();
                let n = one_request(kind, &server, options(true)).await;
                times.push(t.elapsed());
                assert!(n >= 2);
                assert_eq!(server.request_count(), failures as usize + 1);
            }
            let m = median(times);
            if failures == 0 {
                direct_time = m;
                line.push_str(&format!(" | direct {:.0} µs", m.as_secs_f64() * 1e6));
            } else {
                line.push_str(&format!(
                    " | {failures} retries {:.0} µs ({:.2}x direct, {:.0} µs per retry)",
                    m.as_secs_f64() * 1e6,
                    m.as_secs_f64() / direct_time.as_secs_f64(),
                    (m.as_secs_f64() - direct_time.as_secs_f64()) * 1e6 / failures as f64
                ));
            }
        }
        println!("{line}");
    }
}
