//! The mock LLM HTTP server.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::render::{Chunk, default_error_body, render};
use crate::request::{ApiKind, RecordedRequest, check_invariants};
use crate::scenario::Scenario;

#[derive(Debug, Default)]
struct Inner {
    scenario: Scenario,
    used: Vec<u32>,
    requests: Vec<RecordedRequest>,
    violations: Vec<String>,
}

type Shared = Arc<Mutex<Inner>>;

fn lock(s: &Shared) -> MutexGuard<'_, Inner> {
    // A panic while holding the lock cannot leave `Inner` half-updated in a
    // way that matters for a test double; keep serving.
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running mock server. Dropping it stops the server.
pub struct MockServer {
    addr: SocketAddr,
    state: Shared,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl MockServer {
    /// Serve `scenario` on `127.0.0.1` at a free port.
    pub async fn start(scenario: Scenario) -> std::io::Result<Self> {
        Self::start_on(scenario, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    pub async fn start_on(scenario: Scenario, addr: SocketAddr) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let used = vec![0; scenario.steps.len()];
        let state: Shared = Arc::new(Mutex::new(Inner {
            scenario,
            used,
            ..Inner::default()
        }));
        let app = Router::new().fallback(handle).with_state(state.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = rx.await;
            });
            if let Err(e) = serve.await {
                tracing::error!(error = %e, "mock server stopped");
            }
        });
        Ok(Self {
            addr,
            state,
            shutdown: Some(tx),
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Base URL for an Anthropic client (`{url}`; the client adds `/v1/messages`).
    pub fn anthropic_base_url(&self) -> String {
        self.url()
    }

    /// Base URL for an OpenAI-compatible client (`{url}/v1`).
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Base URL for a Gemini client (`{url}/v1beta`).
    pub fn gemini_base_url(&self) -> String {
        format!("{}/v1beta", self.url())
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    pub fn request_count(&self) -> usize {
        lock(&self.state).requests.len()
    }

    /// Protocol violations seen so far (invariants and unexpected requests).
    pub fn violations(&self) -> Vec<String> {
        lock(&self.state).violations.clone()
    }

    /// Remove and return the violations seen so far, marking them as
    /// handled (dropping a server with unread violations fails the test).
    pub fn take_violations(&self) -> Vec<String> {
        std::mem::take(&mut lock(&self.state).violations)
    }

    /// Indexes of steps that still have uses left.
    pub fn unused_steps(&self) -> Vec<usize> {
        let inner = lock(&self.state);
        inner
            .scenario
            .steps
            .iter()
            .enumerate()
            .filter(|(i, s)| inner.used.get(*i).copied().unwrap_or(0) < s.times)
            .map(|(i, _)| i)
            .collect()
    }

    /// Fail the test if any request broke a protocol invariant.
    #[allow(clippy::panic)] // a test assertion helper
    pub fn assert_no_violations(&self) {
        let v = self.violations();
        if !v.is_empty() {
            panic!("mock LLM saw protocol violations:\n  {}", v.join("\n  "));
        }
    }

    /// Stop serving and wait for the server task.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for MockServer {
    /// Stops the server. A test that leaves protocol violations unread fails
    /// here: read them with [`MockServer::take_violations`] when they are
    /// expected.
    #[allow(clippy::panic)] // failing the test is the point
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
        let violations = std::mem::take(&mut lock(&self.state).violations);
        if !violations.is_empty() && !std::thread::panicking() {
            panic!(
                "mock LLM saw protocol violations (call take_violations() if they are expected):\n  {}",
                violations.join("\n  ")
            );
        }
    }
}

/// Which API a path belongs to, and the model named in the path (Gemini).
fn route(path: &str) -> Option<(ApiKind, Option<String>)> {
    if path == "/v1/messages" {
        return Some((ApiKind::Anthropic, None));
    }
    if path == "/v1/chat/completions" || path == "/chat/completions" {
        return Some((ApiKind::OpenAi, None));
    }
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    let model = rest.strip_suffix(":streamGenerateContent")?;
    Some((ApiKind::Google, Some(model.to_string())))
}

fn redact(name: &str, value: &str) -> String {
    match name {
        "authorization" | "x-api-key" | "x-goog-api-key" | "api-key" => "<redacted>".into(),
        _ => value.to_string(),
    }
}

fn json_response(status: StatusCode, v: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        v.to_string(),
    )
        .into_response()
}

async fn handle(
    State(state): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    if method == Method::GET && path == "/__mock/requests" {
        return json_response(StatusCode::OK, json!(lock(&state).requests));
    }
    if method == Method::GET && path == "/__mock/violations" {
        return json_response(StatusCode::OK, json!(lock(&state).violations));
    }
    let Some((api, path_model)) = route(&path).filter(|_| method == Method::POST) else {
        let msg = format!("unexpected request {method} {path}");
        lock(&state).violations.push(msg.clone());
        return json_response(StatusCode::NOT_FOUND, json!({"error": {"message": msg}}));
    };
    let parsed: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let msg = format!("{} request body is not JSON: {e}", api.as_str());
            lock(&state).violations.push(msg.clone());
            return json_response(StatusCode::BAD_REQUEST, json!({"error": {"message": msg}}));
        }
    };
    if api == ApiKind::Google
        && uri
            .query()
            .is_none_or(|q| !q.split('&').any(|p| p == "alt=sse"))
    {
        lock(&state)
            .violations
            .push("google: streamGenerateContent called without ?alt=sse".into());
    }
    let model = path_model.unwrap_or_else(|| {
        parsed
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    });
    let mut record = RecordedRequest {
        api,
        path,
        model: model.clone(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                let name = k.as_str().to_ascii_lowercase();
                let value = redact(&name, v.to_str().unwrap_or("<binary>"));
                (name, value)
            })
            .collect(),
        body: parsed,
        step: None,
    };
    let step = {
        let mut inner = lock(&state);
        let problems = check_invariants(&record);
        let n = inner.requests.len();
        inner
            .violations
            .extend(problems.into_iter().map(|p| format!("request {n}: {p}")));
        let found = inner.scenario.steps.iter().enumerate().position(|(i, s)| {
            inner.used.get(i).copied().unwrap_or(0) < s.times && record.matches(&s.matcher)
        });
        if let Some(i) = found {
            if let Some(u) = inner.used.get_mut(i) {
                *u += 1;
            }
            record.step = Some(i);
        } else {
            inner.violations.push(format!(
                "request {n}: no scenario step left that matches this {} request (model {model})",
                api.as_str()
            ));
        }
        let step = found.and_then(|i| inner.scenario.steps.get(i).cloned());
        inner.requests.push(record.clone());
        step
    };
    let Some(step) = step else {
        // 400 so clients do not retry a request the scenario did not expect.
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": "mia-mock-llm: no scenario step matches this request", "type": "mock_error"}}),
        );
    };
    let resp = step.response;
    if resp.headers_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(resp.headers_delay_ms)).await;
    }
    let status = StatusCode::from_u16(resp.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut builder = Response::builder().status(status);
    for (k, v) in &resp.headers {
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k.as_str()), HeaderValue::from_str(v)) {
            builder = builder.header(k, v);
        }
    }
    if !status.is_success() {
        let body = default_error_body(api, &resp).to_string();
        return builder
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response());
    }
    let include_usage = record
        .body
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let chunks = render(api, &resp, &model, include_usage);
    let stream = futures_util::stream::unfold(chunks.into_iter(), |mut it| async move {
        loop {
            match it.next()? {
                Chunk::DelayMs(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                Chunk::Bytes(b) => return Some((Ok::<Bytes, std::io::Error>(Bytes::from(b)), it)),
                Chunk::Cut => {
                    // Let the server flush what was sent so far; an error
                    // in the same poll would drop the buffered bytes.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    return Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "scenario cut the stream",
                        )),
                        it,
                    ));
                }
            }
        }
    });
    if !resp
        .headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("content-type"))
    {
        builder = builder.header("content-type", "text/event-stream");
    }
    builder
        .header("cache-control", "no-cache")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// A TCP listener whose accept queue is full, so new connections hang in
/// the handshake: drives connect timeouts without leaving loopback. Keep
/// the returned value alive for as long as connections should hang.
pub struct StalledListener {
    pub addr: SocketAddr,
    _socket: tokio::net::TcpListener,
    _fillers: Vec<tokio::net::TcpStream>,
}

impl StalledListener {
    pub async fn start() -> std::io::Result<Self> {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let listener = socket.listen(1)?;
        let addr = listener.local_addr()?;
        let mut fillers = Vec::new();
        // Fill the accept queue (backlog + 1 on Linux); later SYNs are dropped.
        for _ in 0..8 {
            match tokio::time::timeout(
                Duration::from_millis(200),
                tokio::net::TcpStream::connect(addr),
            )
            .await
            {
                Ok(Ok(s)) => fillers.push(s),
                _ => break,
            }
        }
        Ok(Self {
            addr,
            _socket: listener,
            _fillers: fillers,
        })
    }
}
