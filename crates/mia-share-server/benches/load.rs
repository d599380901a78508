//! A bounded load test of the share server on loopback (issue: viewer
//! ≥ 2,000 req/s and p99 ≤ 50 ms with SQLite on a 2-core machine).
//!
//! For each store (SQLite; PostgreSQL too when `MIA_SHARE_TEST_POSTGRES`
//! names a cluster): one realistic share (60 messages with tool calls and
//! a diff), then for a fixed time
//! - baseline: `GET /` (the same HTTP stack and headers, no database),
//! - viewers: N keep-alive connections reading `GET /s/{id}`,
//! - uploads: M connections creating shares (`POST /api/sessions`, which
//!   also renders the page),
//!
//! and prints p50/p99 latency and requests/s, with the viewer's rate as a
//! ratio of the baseline measured in the same run. Rate limits are off
//! (`--read-rate-limit 0`): this measures the server, not its limiter.
//!
//! `cargo bench -p mia-share-server --bench load` (env: `LOAD_SECONDS`,
//! `LOAD_VIEWERS`, `LOAD_UPLOADERS`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use mia_protocol::{
    SHARE_PAYLOAD_VERSION, SharePayload, SharedDiff, SharedMessage, SharedPart, SharedSession,
};
use mia_share_server::{AppState, Settings, Store};

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn payload(i: usize) -> SharePayload {
    let mut messages = Vec::new();
    for n in 0..30 {
        messages.push(SharedMessage {
            id: format!("u{n}"),
            role: "user".into(),
            parts: vec![SharedPart::Text {
                content: format!(
                    "Step {n}: please fix the failing test in `src/lib.rs` and explain **why**."
                ),
            }],
            metadata: None,
            created_at: 1_800_000_000_000 + n * 60_000,
        });
        messages.push(SharedMessage {
            id: format!("a{n}"),
            role: "assistant".into(),
            parts: vec![
                SharedPart::Text {
                    content: "I'll read the file first.\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```".into(),
                },
                SharedPart::ToolCall {
                    call_id: format!("c{n}"),
                    name: "read".into(),
                    args: serde_json::json!({"path": "src/lib.rs"}),
                },
                SharedPart::ToolResult {
                    call_id: format!("c{n}"),
                    name: "read".into(),
                    output: "     1\tpub fn add(a: i32, b: i32) -> i32 {\n     2\t    a + b\n     3\t}\n".repeat(20),
                    is_error: false,
                    duration_ms: Some(12),
                    omitted: false,
                },
            ],
            metadata: None,
            created_at: 1_800_000_000_000 + n * 60_000 + 30_000,
        });
    }
    let mut patch = String::from("@@ -1,40 +1,40 @@\n");
    for l in 0..40 {
        patch.push_str(&format!(
            "-    let old_{l} = compute({l});\n+    let new_{l} = compute({l}) + 1;\n"
        ));
    }
    SharePayload {
        version: SHARE_PAYLOAD_VERSION.into(),
        session: SharedSession {
            id: format!("bench-{i}"),
            title: "Fix the failing test".into(),
            project: "app".into(),
            created_at: 1_800_000_000_000,
            updated_at: None,
            model: Some("anthropic/claude-sonnet-4-5".into()),
            agent: Some("build".into()),
        },
        messages,
        diffs: vec![SharedDiff {
            file: "src/lib.rs".into(),
            status: "modified".into(),
            additions: 40,
            deletions: 40,
            patch,
            binary: false,
        }],
    }
}

type Client = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    Full<Bytes>,
>;

fn client() -> Client {
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .pool_max_idle_per_host(256)
        .build_http()
}

struct Result {
    requests: u64,
    errors: u64,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Result {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
    fn pct(&self, p: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies[i]
    }
}

/// `workers` connections repeating `make()` for `secs`.
async fn load(
    workers: u64,
    secs: u64,
    make: Arc<dyn Fn() -> hyper::Request<Full<Bytes>> + Send + Sync>,
    expect: u16,
) -> Result {
    let c = client();
    let start = Instant::now();
    let deadline = start + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for _ in 0..workers {
        let c = c.clone();
        let make = make.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut errors = 0u64;
            while Instant::now() < deadline {
                let t = Instant::now();
                match c.request(make()).await {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let _ = r.into_body().collect().await;
                        if status != expect {
                            errors += 1;
                        }
                    }
                    Err(_) => errors += 1,
                }
                lat.push(t.elapsed());
            }
            (lat, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    for t in tasks {
        if let Ok((l, e)) = t.await {
            latencies.extend(l);
            errors += e;
        }
    }
    let elapsed = start.elapsed();
    latencies.sort();
    Result {
        requests: latencies.len() as u64,
        errors,
        elapsed,
        latencies,
    }
}

async fn bench(name: &str, store: Store) {
    let secs = env_num("LOAD_SECONDS", 5);
    let viewers = env_num("LOAD_VIEWERS", 32);
    let uploaders = env_num("LOAD_UPLOADERS", 8);
    let settings = Settings {
        read_limit: 0,
        write_limit: 0,
        max_payload_bytes: 10 * 1024 * 1024,
        ..Default::default()
    };
    let state = AppState::new(store, settings);
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{name}: cannot listen: {e}");
            return;
        }
    };
    let Ok(addr) = listener.local_addr() else {
        return;
    };
    tokio::spawn(mia_share_server::serve(
        listener,
        state,
        std::future::pending(),
    ));
    let base = format!("http://{addr}");
    let body = match serde_json::to_vec(&payload(0)) {
        Ok(b) => Bytes::from(b),
        Err(_) => return,
    };
    let created = client()
        .request(
            hyper::Request::post(format!("{base}/api/sessions"))
                .header("content-type", "application/json")
                .body(Full::new(body.clone()))
                .unwrap_or_default(),
        )
        .await;
    let id = match created {
        Ok(r) => {
            let bytes = r
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| v["id"].as_str().map(str::to_string))
                .unwrap_or_default()
        }
        Err(e) => {
            eprintln!("{name}: create failed: {e}");
            return;
        }
    };
    let page_bytes = {
        let r = client()
            .request(
                hyper::Request::get(format!("{base}/s/{id}"))
                    .body(Full::new(Bytes::new()))
                    .unwrap_or_default(),
            )
            .await;
        match r {
            Ok(r) => r
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes().len())
                .unwrap_or(0),
            Err(_) => 0,
        }
    };

    let b = base.clone();
    let baseline = load(
        viewers,
        secs,
        Arc::new(move || {
            hyper::Request::get(format!("{b}/"))
                .body(Full::new(Bytes::new()))
                .unwrap_or_default()
        }),
        200,
    )
    .await;
    let b = base.clone();
    let view = load(
        viewers,
        secs,
        Arc::new(move || {
            hyper::Request::get(format!("{b}/s/{id}"))
                .body(Full::new(Bytes::new()))
                .unwrap_or_default()
        }),
        200,
    )
    .await;
    let b = base.clone();
    let up = load(
        uploaders,
        secs,
        Arc::new(move || {
            hyper::Request::post(format!("{b}/api/sessions"))
                .header("content-type", "application/json")
                .body(Full::new(body.clone()))
                .unwrap_or_default()
        }),
        201,
    )
    .await;
    let ms = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1000.0);
    println!(
        "| {name} | baseline `GET /` ({viewers} conns) | {:.0} | {} | {} | {} | 1.00 |",
        baseline.rps(),
        ms(baseline.pct(0.5)),
        ms(baseline.pct(0.99)),
        baseline.errors
    );
    println!(
        "| {name} | viewer `GET /s/{{id}}` ({viewers} conns, {page_bytes} B page) | {:.0} | {} | {} | {} | {:.2} |",
        view.rps(),
        ms(view.pct(0.5)),
        ms(view.pct(0.99)),
        view.errors,
        view.rps() / baseline.rps().max(1.0)
    );
    println!(
        "| {name} | upload `POST /api/sessions` ({uploaders} conns, {} B payload) | {:.0} | {} | {} | {} | {:.4} |",
        payload_len(),
        up.rps(),
        ms(up.pct(0.5)),
        ms(up.pct(0.99)),
        up.errors,
        up.rps() / baseline.rps().max(1.0)
    );
}

fn payload_len() -> usize {
    serde_json::to_vec(&payload(0))
        .map(|v| v.len())
        .unwrap_or(0)
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        eprintln!("cannot start the runtime");
        return;
    };
    rt.block_on(async {
        println!("| store | load | req/s | p50 ms | p99 ms | errors | req/s ÷ baseline |");
        println!("| --- | --- | --- | --- | --- | --- | --- |");
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("no temp dir: {e}");
                return;
            }
        };
        match Store::sqlite(&dir.path().join("bench.db")).await {
            Ok(s) => bench("SQLite", s).await,
            Err(e) => eprintln!("SQLite: {e}"),
        }
        if let Ok(admin) = std::env::var("MIA_SHARE_TEST_POSTGRES") {
            match fresh_db(&admin).await {
                Some(url) => match Store::postgres(&url).await {
                    Ok(s) => bench("PostgreSQL", s).await,
                    Err(e) => eprintln!("PostgreSQL: {e}"),
                },
                None => eprintln!("PostgreSQL: could not create a database on {admin}"),
            }
        } else {
            eprintln!(
                "PostgreSQL skipped: set MIA_SHARE_TEST_POSTGRES (scripts/pg-throwaway start DIR)"
            );
        }
    });
}

async fn fresh_db(admin: &str) -> Option<String> {
    let (client, conn) = tokio_postgres::connect(admin, tokio_postgres::NoTls)
        .await
        .ok()?;
    tokio::spawn(conn);
    let name = format!("share_bench_{}", std::process::id());
    let _ = client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .await;
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .ok()?;
    let (prefix, _) = admin.rsplit_once('/')?;
    Some(format!("{prefix}/{name}"))
}
