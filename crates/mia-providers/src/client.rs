//! The shared request loop: send, stream, decode, retry, time out, cancel.
//!
//! Each provider supplies a [`Wire`] (how to build the HTTP request, read an
//! error response, and decode the SSE events); this module owns everything
//! else, so the retry and timeout rules are the same for every provider.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use reqwest::header::HeaderMap;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

use crate::error::{ProviderError, TimeoutPhase};
use crate::retry::{RetryDecision, RetryPolicy, Timeouts};
use crate::sse::{SseEvent, SseParser};
use crate::types::{ChatRequest, Completion, StreamEvent};

/// The stream of events for one request. Ends after `Stop` or after one
/// `Err` item.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// A model API client.
pub trait Provider: Send + Sync {
    /// The provider id this client was configured as (`anthropic`, `local`, ...).
    fn id(&self) -> &str;

    /// Start one request. Must be called inside a Tokio runtime. Dropping
    /// the stream or cancelling `cancel` stops the request, including any
    /// retry wait, at once.
    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream;
}

/// Knobs shared by every client.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    /// Multiplier applied to server-sent `retry-after` waits. 1.0 in
    /// production; tests use a small value together with
    /// [`RetryPolicy::scaled`].
    pub retry_after_scale: f64,
    pub user_agent: String,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            retry_after_scale: 1.0,
            user_agent: format!("mia-code/{}", env!("CARGO_PKG_VERSION")),
        }
    }
}

impl ClientOptions {
    /// Every wait multiplied by `factor` (tests: `0.001` turns 8 s into 8 ms).
    pub fn scaled(mut self, factor: f64) -> Self {
        self.timeouts.connect = self.timeouts.connect.mul_f64(factor);
        self.timeouts.idle = self.timeouts.idle.mul_f64(factor);
        self.retry = self.retry.scaled(factor);
        self.retry_after_scale *= factor;
        self
    }
}

/// A ready-to-send HTTP request.
#[derive(Debug, Clone)]
pub(crate) struct HttpCall {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
}

/// What a decoder made of one SSE event.
pub(crate) enum Decoded {
    Continue,
    /// The response is complete; stop reading.
    Done,
}

pub(crate) trait Decoder: Send {
    /// Decode one SSE event into zero or more stream events. An `Err` is an
    /// error the provider reported in the stream or unreadable data.
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Decoded, ProviderError>;

    /// The connection ended cleanly. Returns whether the response was
    /// complete (pushing any final events).
    fn on_eof(&mut self, out: &mut Vec<StreamEvent>) -> Result<bool, ProviderError>;

    /// Token usage known so far, reported when a stream fails after content
    /// so the partial response can still be costed.
    fn usage_so_far(&self) -> Option<crate::types::TokenUsage> {
        None
    }
}

pub(crate) trait Wire: Send + Sync + 'static {
    fn provider(&self) -> &str;
    fn base_url(&self) -> &str;
    fn build(&self, request: &ChatRequest) -> Result<HttpCall, ProviderError>;
    fn classify_http(&self, status: u16, headers: &HeaderMap, body: &str) -> ProviderError;
    fn decoder(&self) -> Box<dyn Decoder>;
}

/// A provider made of a [`Wire`] and the shared loop.
pub(crate) struct HttpProvider<W: Wire> {
    id: String,
    wire: Arc<W>,
    http: reqwest::Client,
    options: ClientOptions,
}

impl<W: Wire> HttpProvider<W> {
    pub(crate) fn new(id: String, wire: W, options: ClientOptions) -> Result<Self, ProviderError> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(options.timeouts.connect)
            .user_agent(options.user_agent.clone())
            .pool_idle_timeout(Duration::from_secs(60));
        // A local model server (Ollama, LM Studio, the mock) is never reached
        // through an HTTP(S)_PROXY from the environment.
        if is_loopback_url(wire.base_url()) {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| ProviderError::Config {
            provider: id.clone(),
            message: format!("could not create the HTTP client: {}", error_chain(&e)),
        })?;
        Ok(Self {
            id,
            wire: Arc::new(wire),
            http,
            options,
        })
    }
}

impl<W: Wire> Provider for HttpProvider<W> {
    fn id(&self) -> &str {
        &self.id
    }

    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        let (tx, rx) = mpsc::channel(256);
        let job = Job {
            wire: self.wire.clone(),
            http: self.http.clone(),
            options: self.options.clone(),
            cancel,
            tx,
        };
        let span =
            tracing::debug_span!("provider_request", provider = %self.id, model = %request.model);
        tokio::spawn(tracing::Instrument::instrument(job.run(request), span));
        Box::pin(ReceiverStream::new(rx))
    }
}

/// A failed request: the error and everything that arrived before it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error}")]
pub struct StreamFailure {
    pub error: ProviderError,
    pub partial: Completion,
}

/// Drain a stream into a [`Completion`]. On failure the partial output is
/// returned with the error.
pub async fn collect(mut stream: EventStream) -> Result<Completion, Box<StreamFailure>> {
    use futures_util::StreamExt;
    let mut completion = Completion::default();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => completion.apply(&event),
            Err(error) => {
                return Err(Box::new(StreamFailure {
                    error,
                    partial: completion,
                }));
            }
        }
    }
    if completion.stop.is_none() {
        return Err(Box::new(StreamFailure {
            error: ProviderError::Cancelled,
            partial: completion,
        }));
    }
    Ok(completion)
}

type Item = Result<StreamEvent, ProviderError>;

struct Job<W: Wire> {
    wire: Arc<W>,
    http: reqwest::Client,
    options: ClientOptions,
    cancel: CancellationToken,
    tx: mpsc::Sender<Item>,
}

/// How one attempt ended.
enum AttemptEnd {
    Finished,
    /// The consumer dropped the stream or cancelled.
    Stopped,
    Failed {
        error: ProviderError,
        content_seen: bool,
        /// The server's `retry-after-ms`/`retry-after`, for HTTP errors.
        server_wait: Option<Duration>,
    },
}

enum Sent {
    Ok,
    Stopped,
}

impl<W: Wire> Job<W> {
    async fn run(self, request: ChatRequest) {
        let call = match self.wire.build(&request) {
            Ok(call) => call,
            Err(e) => {
                let _ = self.send(Err(e)).await;
                return;
            }
        };
        let mut retries = 0u32;
        loop {
            if self.cancel.is_cancelled() {
                let _ = self.tx.send(Err(ProviderError::Cancelled)).await;
                return;
            }
            let (error, content_seen, server_wait) = match self.attempt(&call).await {
                AttemptEnd::Finished | AttemptEnd::Stopped => return,
                AttemptEnd::Failed {
                    error,
                    content_seen,
                    server_wait,
                } => (error, content_seen, server_wait),
            };
            if error == ProviderError::Cancelled {
                let _ = self.tx.send(Err(error)).await;
                return;
            }
            if content_seen {
                tracing::warn!(provider = self.wire.provider(), %error, "stream cut after content");
                let _ = self
                    .send(Err(ProviderError::Interrupted {
                        provider: self.wire.provider().to_string(),
                        cause: Box::new(error),
                    }))
                    .await;
                return;
            }
            match self.options.retry.decide(
                &error,
                retries,
                server_wait,
                self.options.retry_after_scale,
            ) {
                RetryDecision::GiveUp => {
                    let _ = self.send(Err(error)).await;
                    return;
                }
                RetryDecision::Retry(delay) => {
                    retries += 1;
                    tracing::info!(provider = self.wire.provider(), retry = retries, delay_ms = delay.as_millis() as u64, %error, "retrying");
                    let event = StreamEvent::Retrying {
                        attempt: retries,
                        delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        reason: error.to_string(),
                    };
                    if let Sent::Stopped = self.send(Ok(event)).await {
                        return;
                    }
                    if !delay.is_zero() {
                        tokio::select! {
                            biased;
                            _ = self.cancel.cancelled() => {
                                let _ = self.tx.send(Err(ProviderError::Cancelled)).await;
                                return;
                            }
                            _ = self.tx.closed() => return,
                            _ = tokio::time::sleep(delay) => {}
                        }
                    }
                }
            }
        }
    }

    async fn send(&self, item: Item) -> Sent {
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => {
                let _ = self.tx.try_send(Err(ProviderError::Cancelled));
                Sent::Stopped
            }
            r = self.tx.send(item) => if r.is_ok() { Sent::Ok } else { Sent::Stopped },
        }
    }

    fn provider(&self) -> String {
        self.wire.provider().to_string()
    }

    fn idle_timeout(&self) -> ProviderError {
        ProviderError::Timeout {
            provider: self.provider(),
            phase: TimeoutPhase::Idle,
            after: self.options.timeouts.idle,
        }
    }

    fn request_error(&self, e: &reqwest::Error) -> ProviderError {
        if e.is_connect() && e.is_timeout() {
            ProviderError::Timeout {
                provider: self.provider(),
                phase: TimeoutPhase::Connect,
                after: self.options.timeouts.connect,
            }
        } else {
            ProviderError::Network {
                provider: self.provider(),
                message: error_chain(e),
            }
        }
    }

    async fn attempt(&self, call: &HttpCall) -> AttemptEnd {
        let idle = self.options.timeouts.idle;
        let mut builder = self.http.post(&call.url).body(call.body.clone());
        for (k, v) in &call.headers {
            builder = builder.header(k, v);
        }
        let failed = |error| AttemptEnd::Failed {
            error,
            content_seen: false,
            server_wait: None,
        };
        let response = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return failed(ProviderError::Cancelled),
            _ = self.tx.closed() => return AttemptEnd::Stopped,
            r = tokio::time::timeout(idle, builder.send()) => match r {
                Err(_) => return failed(self.idle_timeout()),
                Ok(Err(e)) => return failed(self.request_error(&e)),
                Ok(Ok(resp)) => resp,
            },
        };
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let body = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return failed(ProviderError::Cancelled),
                r = tokio::time::timeout(idle, read_limited(response, 64 * 1024)) => match r {
                    Err(_) => return failed(self.idle_timeout()),
                    Ok(body) => body,
                },
            };
            return AttemptEnd::Failed {
                error: self.wire.classify_http(status.as_u16(), &headers, &body),
                content_seen: false,
                server_wait: crate::retry::parse_retry_after(&headers),
            };
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if content_type.starts_with("application/json") {
            // A server that ignored `stream: true` (or an error with a 200).
            let body = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return failed(ProviderError::Cancelled),
                r = tokio::time::timeout(idle, read_limited(response, 64 * 1024)) => r.unwrap_or_default(),
            };
            let error = match self.wire.classify_http(500, &HeaderMap::new(), &body) {
                ProviderError::Server { message, .. } => ProviderError::BadRequest {
                    provider: self.provider(),
                    status: status.as_u16(),
                    message: format!(
                        "expected a streamed (text/event-stream) response but got JSON: {message}. Check that the base URL points to an API that supports streaming"
                    ),
                },
                other => other,
            };
            return failed(error);
        }
        self.read_stream(response).await
    }

    async fn read_stream(&self, response: reqwest::Response) -> AttemptEnd {
        let mut decoder = self.wire.decoder();
        let end = self.read_events(response, &mut *decoder).await;
        if let AttemptEnd::Failed {
            content_seen: true, ..
        } = &end
            && let Some(usage) = decoder.usage_so_far()
            && let Sent::Stopped = self.send(Ok(StreamEvent::Usage { usage })).await
        {
            return AttemptEnd::Stopped;
        }
        end
    }

    async fn read_events(
        &self,
        mut response: reqwest::Response,
        decoder: &mut dyn Decoder,
    ) -> AttemptEnd {
        let idle = self.options.timeouts.idle;
        let mut parser = SseParser::new();
        let mut sse_events = Vec::new();
        let mut out = Vec::new();
        let mut content_seen = false;
        loop {
            let chunk = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return AttemptEnd::Failed { error: ProviderError::Cancelled, content_seen, server_wait: None },
                _ = self.tx.closed() => return AttemptEnd::Stopped,
                r = tokio::time::timeout(idle, response.chunk()) => r,
            };
            let bytes = match chunk {
                Err(_) => {
                    return AttemptEnd::Failed {
                        error: self.idle_timeout(),
                        content_seen,
                        server_wait: None,
                    };
                }
                Ok(Err(e)) => {
                    return AttemptEnd::Failed {
                        error: ProviderError::Network {
                            provider: self.provider(),
                            message: format!("the stream broke: {}", error_chain(&e)),
                        },
                        content_seen,
                        server_wait: None,
                    };
                }
                Ok(Ok(None)) => {
                    let end = if parser.has_partial() {
                        Err(ProviderError::Network {
                            provider: self.provider(),
                            message: "the connection closed in the middle of an event".into(),
                        })
                    } else {
                        decoder.on_eof(&mut out).and_then(|complete| {
                            if complete {
                                Ok(())
                            } else {
                                Err(ProviderError::Network {
                                    provider: self.provider(),
                                    message: "the stream ended before the response was complete"
                                        .into(),
                                })
                            }
                        })
                    };
                    for event in out.drain(..) {
                        content_seen |= event.is_content();
                        if let Sent::Stopped = self.send(Ok(event)).await {
                            return AttemptEnd::Stopped;
                        }
                    }
                    return match end {
                        Ok(()) => AttemptEnd::Finished,
                        Err(error) => AttemptEnd::Failed {
                            error,
                            content_seen,
                            server_wait: None,
                        },
                    };
                }
                Ok(Ok(Some(bytes))) => bytes,
            };
            parser.feed(&bytes, &mut sse_events);
            let mut done = false;
            let mut failure = None;
            for sse in sse_events.drain(..) {
                match decoder.on_event(&sse, &mut out) {
                    Ok(Decoded::Continue) => {}
                    Ok(Decoded::Done) => {
                        done = true;
                        break;
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            for event in out.drain(..) {
                content_seen |= event.is_content();
                if let Sent::Stopped = self.send(Ok(event)).await {
                    return AttemptEnd::Stopped;
                }
            }
            if let Some(error) = failure {
                return AttemptEnd::Failed {
                    error,
                    content_seen,
                    server_wait: None,
                };
            }
            if done {
                return AttemptEnd::Finished;
            }
        }
    }
}

async fn read_limited(mut response: reqwest::Response, limit: usize) -> String {
    let mut buf = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        buf.extend_from_slice(&chunk);
        if buf.len() >= limit {
            buf.truncate(limit);
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// `e` and its sources, joined with `: `.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// Whether `url`'s host is `localhost` or a loopback address.
pub(crate) fn is_loopback_url(url: &str) -> bool {
    let Some(rest) = url.split_once("://").map(|(_, r)| r) else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Shorten an error body for messages.
pub(crate) fn snippet(body: &str) -> String {
    let trimmed = body.trim();
    let mut s: String = trimmed.chars().take(500).collect();
    if s.len() < trimmed.len() {
        s.push('…');
    }
    if s.is_empty() {
        s.push_str("(empty response body)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls() {
        for yes in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8080",
            "http://127.3.2.1/v1",
            "http://[::1]:9/x",
            "http://LOCALHOST",
        ] {
            assert!(is_loopback_url(yes), "{yes}");
        }
        for no in [
            "https://api.openai.com/v1",
            "http://10.0.0.1",
            "localhost",
            "http://localhost.evil.test",
        ] {
            assert!(!is_loopback_url(no), "{no}");
        }
    }
}
