//! `mia-share-server`: stores shared sessions and serves their viewer pages.
//!
//! API (spec 022; docs/share-server.md):
//! - `POST /api/sessions[?ttl_days=N]` with a payload → 201
//!   `{"id","url","secret","created_at","expires_at"}`;
//! - `PUT /api/sessions/{id}` and `DELETE /api/sessions/{id}` with
//!   `Authorization: Bearer <secret>` → 200 / 204;
//! - `GET /api/sessions/{id}` → the stored payload; `GET /s/{id}` → the page;
//!   both 404 for an unknown id and 410 once revoked or expired;
//! - `GET /healthz`, `GET /metrics` (Prometheus text).
//!
//! Ids carry 128 random bits (22 URL-safe characters); the secret 256 bits,
//! stored only as its SHA-256 and compared in constant time. The server
//! keeps no state between requests besides the database (rate-limit
//! buckets are per instance), so instances scale out on one PostgreSQL.

pub mod limits;
pub mod store;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use mia_protocol::SharePayload;
use rand::RngCore as _;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq as _;

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 1024;
/// A new connection must deliver its first request within this time.
pub const FIRST_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
pub use limits::RateLimiter;
pub use store::{Store, StoreError};

/// Tombstones of revoked or expired shares are kept this long (their URLs
/// answer 410, then 404).
const TOMBSTONE_DAYS: i64 = 90;
const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone)]
pub struct Settings {
    /// Largest accepted payload in bytes (default 10 MB).
    pub max_payload_bytes: usize,
    /// Writes (create, update, delete) per client IP per minute; 0: unlimited.
    pub write_limit: u32,
    /// Reads per client IP per minute; 0: unlimited.
    pub read_limit: u32,
    /// Bytes of live shares one client address may keep here; 0: unlimited.
    pub bytes_per_uploader: u64,
    /// A share's lifetime when the client asks for none (days).
    pub default_ttl_days: u32,
    /// The longest lifetime a client may ask for (days).
    pub max_ttl_days: u32,
    /// Take the client address from `X-Forwarded-For` (behind a reverse
    /// proxy; set `public_url` there too).
    pub trust_proxy: bool,
    /// The URL shares are reached at (`https://share.example.com`); when
    /// unset, the address the server listens on (never the Host header).
    pub public_url: Option<String>,
    /// How often expired shares are purged.
    pub purge_every: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_payload_bytes: 10 * 1024 * 1024,
            write_limit: 60,
            read_limit: 600,
            bytes_per_uploader: 200 * 1024 * 1024,
            default_ttl_days: 30,
            max_ttl_days: 365,
            trust_proxy: false,
            public_url: None,
            purge_every: Duration::from_secs(60),
        }
    }
}

type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

#[derive(Default)]
pub struct Metrics {
    pub created: AtomicU64,
    pub updated: AtomicU64,
    pub revoked: AtomicU64,
    pub expired: AtomicU64,
    pub views: AtomicU64,
    pub not_found: AtomicU64,
    pub gone: AtomicU64,
    pub rate_limited: AtomicU64,
    pub too_large: AtomicU64,
    pub unauthorized: AtomicU64,
    pub errors: AtomicU64,
}

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub settings: Arc<Settings>,
    pub clock: Clock,
    pub metrics: Arc<Metrics>,
    pub writes: Arc<RateLimiter>,
    pub reads: Arc<RateLimiter>,
    /// `http://HOST:PORT` this server listens on (share links use it when
    /// no `--public-url` is set; never a request's Host header).
    pub bound: Arc<std::sync::OnceLock<String>>,
}

impl AppState {
    pub fn new(store: Store, settings: Settings) -> Self {
        Self::with_clock(store, settings, Arc::new(mia_protocol::now_ms))
    }

    /// With another clock (tests move time to check expiry).
    pub fn with_clock(store: Store, settings: Settings, clock: Clock) -> Self {
        Self {
            writes: Arc::new(RateLimiter::new(settings.write_limit)),
            reads: Arc::new(RateLimiter::new(settings.read_limit)),
            store,
            settings: Arc::new(settings),
            clock,
            metrics: Arc::new(Metrics::default()),
            bound: Arc::default(),
        }
    }

    fn now(&self) -> i64 {
        (self.clock)()
    }

    /// Expire and forget what is due (the background task calls this).
    pub async fn purge(&self) -> Result<(u64, u64), StoreError> {
        let now = self.now();
        let (expired, forgotten) = self.store.purge(now, now - TOMBSTONE_DAYS * DAY_MS).await?;
        self.metrics.expired.fetch_add(expired, Ordering::Relaxed);
        self.writes.forget_idle();
        self.reads.forget_idle();
        Ok((expired, forgotten))
    }
}

/// The routes, with the security headers every answer carries.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/sessions", axum::routing::post(create))
        .route(
            "/api/sessions/{id}",
            get(get_payload).put(update).delete(revoke),
        )
        .route("/s/{id}", get(view))
        .route("/healthz", get(health))
        .route("/metrics", get(metrics))
        .route("/", get(index))
        .fallback(not_found_page)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Start purging expired shares every `settings.purge_every`.
pub fn spawn_purger(state: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(state.settings.purge_every);
        loop {
            tick.tick().await;
            match state.purge().await {
                Ok((0, 0)) => {}
                Ok((expired, forgotten)) => {
                    tracing::info!(expired, forgotten, "purged shares")
                }
                Err(e) => tracing::warn!(error = %e, "purging expired shares failed"),
            }
        }
    })
}

/// Serve until the future `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    let host = if addr.is_ipv6() {
        format!("[{}]", addr.ip())
    } else {
        addr.ip().to_string()
    };
    let _ = state.bound.set(format!("http://{host}:{}", addr.port()));
    let limits = mia_http::Limits {
        max_connections: MAX_CONNECTIONS,
        header_read_timeout: Duration::from_secs(10),
        first_request: FIRST_REQUEST_TIMEOUT,
        idle: Duration::from_secs(60),
        shutdown_grace: Duration::from_secs(5),
    };
    mia_http::serve(listener, router(state), limits, shutdown).await
}

// ---------------------------------------------------------------- guard

fn client_ip(state: &AppState, headers: &HeaderMap, peer: Option<SocketAddr>) -> Option<IpAddr> {
    if state.settings.trust_proxy
        && let Some(ip) = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|v| v.trim().parse().ok())
    {
        return Some(ip);
    }
    peer.map(|p| p.ip())
}

/// Rate limits, then the headers every response gets.
async fn guard(State(state): State<AppState>, req: Request<Body>, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let ip = client_ip(&state, req.headers(), peer);
    let path = req.uri().path();
    let limited = path != "/healthz" && path != "/metrics";
    let limiter = if req.method() == Method::GET || req.method() == Method::HEAD {
        &state.reads
    } else {
        &state.writes
    };
    let mut res = match ip {
        Some(ip) if limited => match limiter.check(ip) {
            Ok(()) => next.run(req).await,
            Err(retry) => {
                state.metrics.rate_limited.fetch_add(1, Ordering::Relaxed);
                let mut r = error(
                    StatusCode::TOO_MANY_REQUESTS,
                    &format!(
                        "too many requests from {ip}; try again in {} s",
                        retry.as_secs().max(1)
                    ),
                );
                if let Ok(v) = HeaderValue::from_str(&retry.as_secs().max(1).to_string()) {
                    r.headers_mut().insert(header::RETRY_AFTER, v);
                }
                r
            }
        },
        _ => next.run(req).await,
    };
    let h = res.headers_mut();
    h.insert(
        "x-robots-tag",
        HeaderValue::from_static("noindex, nofollow"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
        );
    }
    res
}

// ---------------------------------------------------------------- helpers

fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": message }))).into_response()
}

fn internal(state: &AppState, e: StoreError) -> Response {
    state.metrics.errors.fetch_add(1, Ordering::Relaxed);
    tracing::error!(error = %e, "store error");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "the share store failed; see the server log",
    )
}

fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}

/// A new share id: 128 random bits, 22 URL-safe characters, never starting with `-` (which a
/// command line would read as an option: `mia-code unshare -Jx…`).
pub fn new_id() -> String {
    loop {
        let id = random_token(16);
        if !id.starts_with('-') {
            return id;
        }
    }
}

/// A new delete/update secret: 256 random bits.
pub fn new_secret() -> String {
    random_token(32)
}

pub fn hash_secret(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

/// Does `given` hash to `stored`? Constant time in the content compared.
pub fn secret_matches(stored: &[u8], given: &str) -> bool {
    let h = hash_secret(given);
    stored.len() == h.len() && bool::from(stored.ct_eq(&h))
}

/// An id is 22 URL-safe base64 characters; anything else is not one of ours.
fn plausible_id(id: &str) -> bool {
    id.len() == 22
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Where share links point: `--public-url`, else the address this server
/// listens on. Never a request's Host or X-Forwarded-Host header, which
/// whoever sends the request chooses.
fn base_url(state: &AppState) -> String {
    if let Some(u) = &state.settings.public_url {
        return u.trim_end_matches('/').to_string();
    }
    state
        .bound
        .get()
        .cloned()
        .unwrap_or_else(|| "http://localhost".into())
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

async fn read_payload(state: &AppState, body: Body) -> Result<(SharePayload, String), Response> {
    let limit = state.settings.max_payload_bytes;
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|_| {
        state.metrics.too_large.fetch_add(1, Ordering::Relaxed);
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the payload is larger than this server's limit of {} bytes; share without tool results or diffs (share.includeToolResults / share.includeDiffs), or raise --max-payload-bytes",
                limit
            ),
        )
    })?;
    let payload: SharePayload = serde_json::from_slice(&bytes).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            &format!("the body is not a share payload: {e}"),
        )
    })?;
    mia_share::validate(&payload).map_err(|m| error(StatusCode::UNPROCESSABLE_ENTITY, &m))?;
    // Store the canonical form, not whatever bytes came in.
    let text = serde_json::to_string(&payload)
        .map_err(|e| error(StatusCode::BAD_REQUEST, &e.to_string()))?;
    Ok((payload, text))
}

async fn render(payload: SharePayload, expires_at: Option<i64>) -> String {
    let fallback = payload.clone();
    let rendered = tokio::task::spawn_blocking(move || {
        mia_share::page(
            &payload,
            &mia_share::PageMeta {
                expires_at,
                exported: false,
            },
        )
    })
    .await;
    match rendered {
        Ok(html) if !html.is_empty() => html,
        Ok(_) | Err(_) => {
            tracing::error!(session = %fallback.session.id, "rendering a share failed; serving it as plain text");
            plain_page(&fallback)
        }
    }
}

/// The transcript as plain text, with a notice: what a share shows when
/// its page could not be rendered (never an empty page).
fn plain_page(p: &SharePayload) -> String {
    let mut body = String::new();
    for m in &p.messages {
        body.push_str(&format!("\n[{}]\n", m.role));
        for part in &m.parts {
            let text = match part {
                mia_protocol::SharedPart::Text { content }
                | mia_protocol::SharedPart::Reasoning { content }
                | mia_protocol::SharedPart::Summary { content } => content.clone(),
                mia_protocol::SharedPart::Error { message } => message.clone(),
                mia_protocol::SharedPart::ToolCall { name, args, .. } => format!("{name} {args}"),
                mia_protocol::SharedPart::ToolResult { output, .. } => output.clone(),
            };
            body.push_str(&text);
            body.push('\n');
        }
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"robots\" content=\"noindex,nofollow\"><title>{t}</title><style>{css}</style></head><body><main><header class=\"share\"><h1>{t}</h1></header><p role=\"status\">This share could not be shown formatted; here is its transcript as plain text.</p><pre>{b}</pre></main></body></html>\n",
        t = mia_share::escape(&p.session.title),
        b = mia_share::escape(&body),
        css = mia_share::stylesheet()
    )
}

/// Render a stored share's page in the background and keep it; until
/// then its view renders it on demand (a renderer version of 0 says "not
/// rendered yet").
fn render_later(
    state: &AppState,
    id: String,
    payload: SharePayload,
    expires_at: Option<i64>,
    text: String,
) {
    let state = state.clone();
    tokio::spawn(async move {
        let html = render(payload, expires_at).await;
        if let Err(e) = state
            .store
            .set_html(&id, html, i64::from(mia_share::RENDERER_VERSION), text)
            .await
        {
            tracing::warn!(error = %e, "storing a rendered page failed");
        }
    });
}

/// Uploads are JSON: anything else is refused (the answer) before it is read.
fn not_json(headers: &HeaderMap) -> Option<Response> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    (!json).then(|| {
        error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the share payload as JSON (Content-Type: application/json)",
        )
    })
}

fn is_gone(meta: &store::ShareMeta, now: i64) -> Option<&'static str> {
    if meta.gone_reason.as_deref() == Some("revoked") {
        return Some("revoked");
    }
    if meta.gone_at.is_some() || meta.expires_at.is_some_and(|e| e <= now) {
        return Some("expired");
    }
    None
}

/// Look a share up for its owner: 404, 410, 401 or 403 as the case is.
async fn authorized(
    state: &AppState,
    id: &str,
    headers: &HeaderMap,
) -> Result<store::ShareMeta, Response> {
    if !plausible_id(id) {
        state.metrics.not_found.fetch_add(1, Ordering::Relaxed);
        return Err(error(StatusCode::NOT_FOUND, "no such share"));
    }
    let Some(secret) = bearer(headers) else {
        state.metrics.unauthorized.fetch_add(1, Ordering::Relaxed);
        return Err(error(
            StatusCode::UNAUTHORIZED,
            "send the share's secret as `Authorization: Bearer <secret>`",
        ));
    };
    let meta = match state.store.get(id, store::Body::None).await {
        Ok(Some((m, _))) => m,
        Ok(None) => {
            state.metrics.not_found.fetch_add(1, Ordering::Relaxed);
            return Err(error(StatusCode::NOT_FOUND, "no such share"));
        }
        Err(e) => return Err(internal(state, e)),
    };
    if !secret_matches(&meta.secret_hash, secret) {
        state.metrics.unauthorized.fetch_add(1, Ordering::Relaxed);
        return Err(error(
            StatusCode::FORBIDDEN,
            "the secret does not match this share",
        ));
    }
    if let Some(why) = is_gone(&meta, state.now()) {
        state.metrics.gone.fetch_add(1, Ordering::Relaxed);
        return Err(error(StatusCode::GONE, &format!("this share was {why}")));
    }
    Ok(meta)
}

// ---------------------------------------------------------------- handlers

#[derive(Deserialize)]
struct CreateQuery {
    ttl_days: Option<u32>,
}

/// Refused (the answer) when `uploader` would keep more than
/// `--bytes-per-uploader` with `size` more bytes (`replacing` a share of
/// its own does not count twice).
async fn over_quota(
    state: &AppState,
    uploader: Option<&str>,
    replacing: &str,
    size: usize,
) -> Option<Response> {
    let limit = state.settings.bytes_per_uploader;
    let uploader = uploader?;
    if limit == 0 {
        return None;
    }
    let used = match state.store.uploaded_bytes(uploader, replacing).await {
        Ok(n) => u64::try_from(n).unwrap_or(0),
        Err(e) => return Some(internal(state, e)),
    };
    (used + size as u64 > limit).then(|| {
        state.metrics.too_large.fetch_add(1, Ordering::Relaxed);
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "this address keeps {used} bytes of shares here and this one would pass the limit of {limit} bytes per uploader; unshare old ones (mia-code share --revoke) or ask the server's operator"
            ),
        )
    })
}

async fn create(
    State(state): State<AppState>,
    Query(q): Query<CreateQuery>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(refused) = not_json(&headers) {
        return refused;
    }
    let (payload, text) = match read_payload(&state, body).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let max = state.settings.max_ttl_days;
    let ttl = q.ttl_days.unwrap_or(state.settings.default_ttl_days);
    if ttl == 0 || ttl > max {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            &format!("ttl_days must be between 1 and {max}"),
        );
    }
    let now = state.now();
    let expires_at = Some(now + i64::from(ttl) * DAY_MS);
    let id = new_id();
    let secret = new_secret();
    let uploader = client_ip(&state, &headers, Some(peer)).map(|ip| ip.to_string());
    if let Some(refused) = over_quota(&state, uploader.as_deref(), "", text.len()).await {
        return refused;
    }
    let session_id = payload.session.id.clone();
    // Stored first; its page is rendered in the background.
    let share = store::NewShare {
        id: id.clone(),
        secret_hash: hash_secret(&secret),
        session_id,
        payload: text.clone(),
        html: String::new(),
        renderer: 0,
        created_at: now,
        expires_at,
        uploader,
    };
    if let Err(e) = state.store.insert(share).await {
        return internal(&state, e);
    }
    let stored = text;
    render_later(&state, id.clone(), payload, expires_at, stored);
    state.metrics.created.fetch_add(1, Ordering::Relaxed);
    let url = format!("{}/s/{id}", base_url(&state));
    (
        StatusCode::CREATED,
        axum::Json(serde_json::json!({
            "id": id, "url": url, "secret": secret, "created_at": now, "expires_at": expires_at,
        })),
    )
        .into_response()
}

async fn update(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(refused) = not_json(&headers) {
        return refused;
    }
    let meta = match authorized(&state, &id, &headers).await {
        Ok(m) => m,
        Err(r) => return r,
    };
    let (payload, text) = match read_payload(&state, body).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    if payload.session.id != meta.session_id {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "this share holds another session; create a new share for it",
        );
    }
    let uploader = client_ip(&state, &headers, Some(peer)).map(|ip| ip.to_string());
    if let Some(refused) = over_quota(&state, uploader.as_deref(), &id, text.len()).await {
        return refused;
    }
    let now = state.now();
    let stored = text.clone();
    match state.store.update(&id, text, String::new(), 0, now).await {
        Ok(true) => {
            render_later(&state, id.clone(), payload, meta.expires_at, stored);
            state.metrics.updated.fetch_add(1, Ordering::Relaxed);
            let url = format!("{}/s/{id}", base_url(&state));
            axum::Json(serde_json::json!({
                "id": id, "url": url, "updated_at": now, "expires_at": meta.expires_at,
            }))
            .into_response()
        }
        Ok(false) => error(StatusCode::GONE, "this share was revoked"),
        Err(e) => internal(&state, e),
    }
}

async fn revoke(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = authorized(&state, &id, &headers).await {
        return r;
    }
    match state.store.revoke(&id, state.now()).await {
        Ok(true) => {
            state.metrics.revoked.fetch_add(1, Ordering::Relaxed);
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(false) => error(StatusCode::GONE, "this share was revoked"),
        Err(e) => internal(&state, e),
    }
}

/// A live share's meta and stored text, or the 404/410 answer.
async fn live(
    state: &AppState,
    id: &str,
    body: store::Body,
) -> Result<(store::ShareMeta, Option<String>), (StatusCode, String)> {
    if !plausible_id(id) {
        state.metrics.not_found.fetch_add(1, Ordering::Relaxed);
        return Err((StatusCode::NOT_FOUND, "No such share.".into()));
    }
    match state.store.get(id, body).await {
        Ok(Some((meta, text))) => match is_gone(&meta, state.now()) {
            Some(why) => {
                state.metrics.gone.fetch_add(1, Ordering::Relaxed);
                Err((StatusCode::GONE, format!("This share was {why}.")))
            }
            None => Ok((meta, text)),
        },
        Ok(None) => {
            state.metrics.not_found.fetch_add(1, Ordering::Relaxed);
            Err((StatusCode::NOT_FOUND, "No such share.".into()))
        }
        Err(e) => {
            state.metrics.errors.fetch_add(1, Ordering::Relaxed);
            tracing::error!(error = %e, "store error");
            Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                "The share store failed.".into(),
            ))
        }
    }
}

async fn get_payload(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match live(&state, &id, store::Body::Payload).await {
        Ok((_, Some(text))) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Ok((_, None)) => error(StatusCode::GONE, "this share has no content"),
        Err((status, msg)) => error(status, &msg),
    }
}

fn html_response(status: StatusCode, html: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, mia_share::csp()),
            (header::CACHE_CONTROL, "no-store"),
        ],
        html,
    )
        .into_response()
}

/// A small page for 404/410 and the index, styled by the same stylesheet.
fn notice_page(status: StatusCode, title: &str, text: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"robots\" content=\"noindex,nofollow\"><title>{t}</title><style>{css}</style></head><body><main><header class=\"share\"><h1>{t}</h1></header><p>{x}</p></main></body></html>\n",
        t = mia_share::escape(title),
        x = mia_share::escape(text),
        css = mia_share::stylesheet()
    );
    html_response(status, html)
}

async fn view(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let meta_html = match live(&state, &id, store::Body::Html).await {
        Ok(x) => x,
        Err((status, msg)) => {
            let title = if status == StatusCode::GONE {
                "Share no longer available"
            } else {
                "Share not found"
            };
            return notice_page(status, title, &msg);
        }
    };
    state.metrics.views.fetch_add(1, Ordering::Relaxed);
    let (meta, html) = meta_html;
    if meta.renderer == i64::from(mia_share::RENDERER_VERSION)
        && let Some(html) = html
    {
        return html_response(StatusCode::OK, html);
    }
    // Not rendered yet (uploads render in the background), or by an older
    // renderer: render from the payload now and keep it.
    let Ok((_, Some(text))) = live(&state, &id, store::Body::Payload).await else {
        return notice_page(StatusCode::GONE, "Share no longer available", "");
    };
    let Ok(payload) = serde_json::from_str::<SharePayload>(&text) else {
        return notice_page(StatusCode::INTERNAL_SERVER_ERROR, "Share unreadable", "");
    };
    let html = render(payload, meta.expires_at).await;
    if let Err(e) = state
        .store
        .set_html(
            &id,
            html.clone(),
            i64::from(mia_share::RENDERER_VERSION),
            text,
        )
        .await
    {
        tracing::warn!(error = %e, "storing a re-rendered page failed");
    }
    html_response(StatusCode::OK, html)
}

async fn index() -> Response {
    notice_page(
        StatusCode::OK,
        "mia-code share server",
        "Shared sessions are reached by their links only.",
    )
}

async fn not_found_page() -> Response {
    notice_page(StatusCode::NOT_FOUND, "Not found", "There is nothing here.")
}

async fn health(State(state): State<AppState>) -> Response {
    match state.store.ping().await {
        Ok(()) => axum::Json(serde_json::json!({"status": "ok", "database": state.store.kind()}))
            .into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(serde_json::json!({"status": "unavailable", "database": state.store.kind(), "error": e.to_string()})),
        )
            .into_response(),
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    let m = &state.metrics;
    let mut out = String::new();
    let mut counter = |name: &str, help: &str, v: &AtomicU64| {
        out.push_str(&format!(
            "# HELP mia_share_{name} {help}\n# TYPE mia_share_{name} counter\nmia_share_{name} {}\n",
            v.load(Ordering::Relaxed)
        ));
    };
    counter("shares_created_total", "Shares created.", &m.created);
    counter("shares_updated_total", "Shares updated.", &m.updated);
    counter(
        "shares_revoked_total",
        "Shares revoked by their owner.",
        &m.revoked,
    );
    counter(
        "shares_expired_total",
        "Shares expired by the purger.",
        &m.expired,
    );
    counter("views_total", "Viewer pages served.", &m.views);
    counter("not_found_total", "Requests for unknown ids.", &m.not_found);
    counter(
        "gone_total",
        "Requests for revoked or expired shares.",
        &m.gone,
    );
    counter(
        "rate_limited_total",
        "Requests refused by a rate limit.",
        &m.rate_limited,
    );
    counter(
        "payload_too_large_total",
        "Uploads over the size limit.",
        &m.too_large,
    );
    counter(
        "unauthorized_total",
        "Writes without the right secret.",
        &m.unauthorized,
    );
    counter("errors_total", "Store errors.", &m.errors);
    if let Ok((live, bytes)) = state.store.stats().await {
        out.push_str(&format!(
            "# HELP mia_share_live_shares Shares that can be viewed.\n# TYPE mia_share_live_shares gauge\nmia_share_live_shares {live}\n# HELP mia_share_stored_bytes Bytes of live shares.\n# TYPE mia_share_stored_bytes gauge\nmia_share_stored_bytes {bytes}\n"
        ));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn share_ids_never_start_with_a_dash() {
        // 1 in 64 random ids would; 20,000 of them make a miss all but impossible.
        for _ in 0..20_000 {
            let id = super::new_id();
            assert_eq!(id.len(), 22);
            assert!(!id.starts_with('-'), "{id}");
        }
    }

    /// What a share shows when its page cannot be rendered: the transcript
    /// as escaped text with a notice, never an empty page.
    #[test]
    #[allow(clippy::panic)]
    fn the_plain_page_is_the_transcript_escaped_with_a_notice() {
        let payload: mia_protocol::SharePayload = serde_json::from_value(serde_json::json!({
            "version": mia_protocol::SHARE_PAYLOAD_VERSION,
            "session": {"id": "s1", "title": "T <b>", "project": "p", "created_at": 1},
            "messages": [{"id": "m1", "role": "user", "created_at": 1,
                "parts": [{"type": "text", "content": "<script>alert(1)</script> hello"}]}],
            "diffs": []
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let html = super::plain_page(&payload);
        assert!(html.contains("could not be shown formatted"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt; hello"),
            "{html}"
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("T &lt;b&gt;"), "{html}");
    }
}
