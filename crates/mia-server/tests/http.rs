#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The HTTP API over a real socket: auth, host guard, sessions, a turn with a
//! permission ask answered over HTTP, Events over real SSE framing.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use mia_config::Paths;
use mia_core::{Runtime, RuntimeOptions, StoreHandle};
use mia_providers::credentials::{Credentials, FileStore};
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

struct Setup {
    _dir: tempfile::TempDir,
    project: std::path::PathBuf,
    base: String,
    token: String,
    mock: MockServer,
    http: reqwest::Client,
}

async fn setup(steps: Value, config: Value) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let mock =
        MockServer::start(serde_json::from_value::<Scenario>(json!({"steps": steps})).unwrap())
            .await
            .unwrap();
    let mut cfg = json!({
        "model": "openai/gpt-5",
        "providers": {"openai": {"baseURL": mock.openai_base_url(), "apiKey": "k"}},
        "unifier": {"enabled": false}
    });
    for (k, v) in config.as_object().unwrap() {
        cfg[k] = v.clone();
    }
    std::fs::write(home.join(".config/mia-code/config.json"), cfg.to_string()).unwrap();
    let paths = Paths::new(home.join(".mia-code"), home.clone(), &home.join(".config"));
    let store = StoreHandle::spawn(mia_store::SessionDb::open(paths.data_db()).unwrap()).unwrap();
    let mut opts = RuntimeOptions::new(paths.clone());
    opts.credentials = Arc::new(Credentials::new(
        Arc::new(|_: &str| None),
        None,
        FileStore::in_home(&paths.home),
    ));
    let runtime = Runtime::new(opts, store);
    let token = mia_server::new_token();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let t = token.clone();
    tokio::spawn(async move {
        mia_server::serve(listener, runtime, t, std::future::pending())
            .await
            .unwrap();
    });
    Setup {
        project: project.canonicalize().unwrap(),
        _dir: dir,
        base,
        token,
        mock,
        http: reqwest::Client::new(),
    }
}

impl Setup {
    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }
    fn post(&self, path: &str, body: Value) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
    }
}

/// Parse an SSE byte stream into (event, data) pairs, with a deadline per event.
struct Sse {
    stream: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buf: String,
}

impl Sse {
    async fn open(s: &Setup, query: &str) -> Self {
        let resp = s
            .http
            .get(format!("{}/api/events?{query}token={}", s.base, s.token))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        Self {
            stream: resp.bytes_stream().boxed(),
            buf: String::new(),
        }
    }

    async fn next(&mut self) -> (String, Value) {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                let mut event = String::new();
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // keep-alive comment
                }
                return (event, serde_json::from_str(&data).unwrap());
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.stream.next())
                .await
                .expect("no SSE event within 20 s")
                .expect("SSE stream ended")
                .unwrap();
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    async fn until(&mut self, kind: &str) -> Vec<(String, Value)> {
        let mut seen = Vec::new();
        loop {
            let ev = self.next().await;
            let done = ev.0 == kind;
            seen.push(ev);
            if done {
                return seen;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_host_guard_and_openapi() {
    let s = setup(json!([]), json!({})).await;
    let r = s
        .http
        .get(format!("{}/api/health", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = s
        .http
        .get(format!("{}/api/sessions", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(r.text().await.unwrap().contains("missing token"));
    let r = s
        .http
        .get(format!("{}/api/sessions", s.base))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = s.get("/api/sessions").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!([]));
    // DNS rebinding: a foreign Host header is refused even with the token.
    let r = s
        .get("/api/sessions")
        .header("host", "evil.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // No CORS headers for other origins.
    let r = s
        .get("/api/sessions")
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());
    let doc: Value = s
        .http
        .get(format!("{}/api/openapi.json", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["paths"]["/api/sessions/{id}/permissions/{request}"]["post"].is_object());
    assert!(doc["components"]["schemas"]["Event"].is_object());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_over_http_with_a_permission_ask() {
    let s = setup(
        json!([
            {"match": {"last_message_contains": "make a file"}, "response": {"events": [
                {"text": "Writing it."},
                {"tool_call": {"id": "call_1", "name": "write", "arguments": {"path": "a.txt", "content": "A\n"}}}
            ]}},
            {"match": {"has_tool_result": "call_1"}, "response": {"events": [{"text": "Done"}]}}
        ]),
        json!({"permissions": [{"permission": "write", "action": "ask"}]}),
    )
    .await;
    let r = s
        .post(
            "/api/sessions",
            json!({"directory": s.project.display().to_string()}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let session: Value = r.json().await.unwrap();
    let id = session["id"].as_str().unwrap().to_string();

    let mut sse = Sse::open(&s, &format!("session={id}&")).await;
    let r = s
        .post(
            &format!("/api/sessions/{id}/messages"),
            json!({"text": "please make a file"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    // A second message while the turn runs is refused, not queued silently.
    let r = s
        .post(
            &format!("/api/sessions/{id}/messages"),
            json!({"text": "again"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);

    let seen = sse.until("permission_asked").await;
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert!(kinds.contains(&"text_delta"), "{kinds:?}");
    let request = &seen.last().unwrap().1["request"];
    assert_eq!(request["tool"], "write");
    let request_id = request["id"].as_str().unwrap();

    let r = s
        .post(
            &format!("/api/sessions/{id}/permissions/{request_id}"),
            json!({"reply": {"kind": "once"}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let rest = sse.until("turn_finished").await;
    assert_eq!(rest.last().unwrap().1["end"], "completed");
    assert_eq!(
        std::fs::read_to_string(s.project.join("a.txt")).unwrap(),
        "A\n"
    );

    let r = s
        .post(
            &format!("/api/sessions/{id}/permissions/{request_id}"),
            json!({"reply": {"kind": "once"}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404, "an answered ask cannot be answered again");

    let full: Value = s
        .get(&format!("/api/sessions/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(full["messages"].as_array().unwrap().len(), 3);
    s.mock.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_say_what_is_wrong() {
    let s = setup(json!([]), json!({})).await;
    let r = s.get("/api/sessions/not-a-uuid").send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("not a valid session id"));
    let r = s
        .get(&format!("/api/sessions/{}", mia_protocol::SessionId::new()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r = s
        .post("/api/sessions", json!({"directory": "/no/such/dir"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = s
        .post(
            "/api/sessions",
            json!({"directory": s.project.display().to_string(), "agent": "wizard"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("unknown agent `wizard`"));
}
