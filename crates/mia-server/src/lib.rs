//! `mia-code serve`: every Op as an HTTP endpoint and every Event on an SSE
//! stream, on loopback by default, guarded by a per-launch bearer token.
//!
//! Security: requests need `Authorization: Bearer <token>` (or `?token=` for
//! `EventSource`, which cannot set headers); when bound to loopback, requests
//! whose `Host` is not a loopback name are refused (DNS rebinding); there is
//! no CORS layer, so other origins cannot read responses.

mod agents;
mod forks;
mod mcp;
mod openapi;
mod review;
mod shares;
mod worktrees;

use std::net::SocketAddr;

use aide::axum::ApiRouter;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use mia_core::{CoreError, ErrorKind, EventItem, OpResult, Runtime};
use mia_protocol::{Op, PermissionReplyKind, SessionId};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

pub use openapi::openapi;
use openapi::{Answers as _, ApiError};

/// A fresh random token (256 bits, hex).
pub fn new_token() -> String {
    use rand::Rng;
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Clone)]
struct AppState {
    runtime: Runtime,
    token: String,
    check_host: bool,
    allowed_hosts: std::sync::Arc<Vec<String>>,
    demo: bool,
    project: Option<String>,
}

/// How the router is set up.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// The bearer token every `/api/*` request must carry.
    pub token: String,
    /// Refuse requests whose `Host` is neither a loopback name nor one of
    /// `allowed_hosts` (DNS rebinding). Always on when serving a socket
    /// ([`serve_with`]); off only for the desktop app's in-process router,
    /// which no network client reaches.
    pub check_host: bool,
    /// Serve the web UI's build (`ui/dist`) at `/`.
    pub ui_dir: Option<std::path::PathBuf>,
    /// A scripted demo: `/api/info` says so and the UI labels itself.
    pub demo: bool,
    /// The project the UI opens first.
    pub project: Option<String>,
    /// Host names answered besides the loopback names (`--allow-remote`
    /// with `--allowed-host`): the Host check is never off.
    pub allowed_hosts: Vec<String>,
}

/// The Content-Security-Policy of the web UI: nothing but its own scripts,
/// no eval, no network images, connections only back to this server.
pub const UI_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The HTTP API. `check_host` refuses requests whose `Host` is not a loopback name.
pub fn router(runtime: Runtime, token: String, check_host: bool) -> Router {
    router_with(
        runtime,
        ServerOptions {
            token,
            check_host,
            ..Default::default()
        },
    )
}

/// The HTTP API (and the web UI when `ui_dir` is set).
pub fn router_with(runtime: Runtime, opts: ServerOptions) -> Router {
    let state = AppState {
        runtime,
        token: opts.token,
        check_host: opts.check_host,
        allowed_hosts: std::sync::Arc::new(
            opts.allowed_hosts
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
        ),
        demo: opts.demo,
        project: opts.project,
    };
    let (public, authed) = routes();
    let authed = authed
        .route_layer(middleware::from_fn(same_origin))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth));
    // Finishing (rather than a plain conversion) also empties aide's
    // per-thread schema collection; `/api/openapi.json` answers the same
    // document, built once from `routes()` by `openapi()`.
    let (api, _document) = openapi::finish(public.merge(authed));
    let api = api
        .route("/api", axum::routing::any(api_not_found))
        .route("/api/{*rest}", axum::routing::any(api_not_found))
        .layer(middleware::from_fn(api_errors));
    let mut app = Router::new().merge(api);
    if let Some(dir) = opts.ui_dir {
        let index = dir.join("index.html");
        let files = tower_http::services::ServeDir::new(&dir)
            .fallback(tower_http::services::ServeFile::new(index));
        app = app
            .fallback_service(files)
            .layer(middleware::from_fn(ui_headers));
    }
    app.layer(middleware::from_fn_with_state(state.clone(), host_guard))
        .with_state(state)
}

/// Every route of the API, documented: the routes that need no token, and
/// those that do (the caller adds authentication to these). The router and
/// the OpenAPI document are both made from this, so a route cannot be
/// served without being documented (tests/openapi.rs checks it).
fn routes() -> (ApiRouter<AppState>, ApiRouter<AppState>) {
    use aide::axum::routing::get_with;
    let public = ApiRouter::new()
        .api_route(
            "/api/health",
            get_with(health, |op| {
                op.summary("Liveness, the version, and whether this is the scripted demo")
                    .tag("server")
                    .json::<200, openapi::shapes::Health>("Alive")
            }),
        )
        .api_route(
            "/api/openapi.json",
            get_with(openapi_json, |op| {
                op.summary("This document")
                    .tag("server")
                    .json::<200, Value>("OpenAPI 3.1 document")
            }),
        );
    let authed = ApiRouter::new()
        .merge(project_routes())
        .merge(settings_routes())
        .merge(session_routes())
        .merge(turn_routes())
        .merge(worktrees::routes())
        .merge(forks::routes())
        .merge(agents::routes())
        .merge(shares::routes())
        .merge(mcp::routes())
        .merge(review::routes())
        .with_path_items(|item| item.security_requirement(openapi::BEARER));
    (public, authed)
}

/// The server's and the projects' routes: what is open, agents, files, the editor.
fn project_routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{get_with, post_with};
    use mia_protocol::{AgentInfo, ProjectSummary, ServerInfo};
    ApiRouter::new()
        .api_route(
            "/api/info",
            get_with(info, |op| {
                op.summary("The server: version, demo, the project to open first, its home")
                    .tag("server")
                    .json::<200, ServerInfo>("The server")
            }),
        )
        .api_route(
            "/api/projects",
            get_with(projects, |op| {
                op.summary("The projects that have sessions")
                    .tag("projects")
                    .json::<200, Vec<ProjectSummary>>("The projects")
            }),
        )
        .api_route(
            "/api/agents",
            get_with(agents, |op| {
                op.summary("The project's agents")
                    .tag("projects")
                    .json::<200, Vec<AgentInfo>>("The agents")
                    .error::<400>("Missing directory")
            }),
        )
        .api_route(
            "/api/files",
            get_with(files, |op| {
                op.summary("The project's files (gitignore respected, at most 20,000)")
                    .tag("projects")
                    .json::<200, Vec<String>>("Paths relative to the project")
                    .error::<400>("Missing directory")
            }),
        )
        .api_route(
            "/api/open",
            post_with(open_in_editor, |op| {
                op.summary("Open in editor: a file inside the project opens with editor.command from the global config, else the system's opener, on the machine mia-code runs on")
                    .tag("projects")
                    .json::<200, openapi::shapes::Opened>("What was started")
                    .error::<400>("Outside the project, or the editor could not start")
                    .error::<404>("No such file")
            }),
        )
        .api_route(
            "/api/asks",
            get_with(asks, |op| {
                op.summary("Every pending permission ask of a project's sessions in this process (worktrees and subagents included), oldest first: the attention queue")
                    .tag("projects")
                    .json::<200, Vec<mia_protocol::PermissionRequest>>("The pending asks")
                    .error::<400>("Missing directory")
            }),
        )
}

/// Settings, provider keys, permission rules and remembered approvals.
fn settings_routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{delete_with, get_with, put_with};
    use mia_protocol::{ApprovalView, PermissionsView, SettingsView};
    ApiRouter::new()
        .api_route(
            "/api/settings",
            get_with(settings, |op| {
                op.summary("The settings (global, and the project's when `directory` is given)")
                    .tag("settings")
                    .json::<200, SettingsView>("The settings")
            })
            .put_with(update_settings, |op| {
                op.summary("Change settings; answers the settings as they are now")
                    .tag("settings")
                    .json::<200, SettingsView>("The settings")
            }),
        )
        .api_route(
            "/api/settings/keys/{provider}",
            put_with(set_key, |op| {
                op.summary("Store a provider's API key (the OS keychain, or a 0600 file)")
                    .tag("settings")
                    .empty::<204>("Stored")
            })
            .delete_with(delete_key, |op| {
                op.summary("Forget a provider's stored API key")
                    .tag("settings")
                    .empty::<204>("Forgotten")
            }),
        )
        .api_route(
            "/api/permissions",
            get_with(permissions, |op| {
                op.summary("The permission rules in force for the project (and an agent)")
                    .tag("settings")
                    .json::<200, PermissionsView>("The rules")
                    .error::<400>("Missing directory")
            }),
        )
        .api_route(
            "/api/approvals",
            get_with(approvals, |op| {
                op.summary("The project's remembered approvals (\"always allow\")")
                    .tag("settings")
                    .json::<200, Vec<ApprovalView>>("The approvals")
                    .error::<400>("Missing directory")
            }),
        )
        .api_route(
            "/api/approvals/{id}",
            delete_with(revoke_approval, |op| {
                op.summary("Revoke a remembered approval")
                    .tag("settings")
                    .path_param::<i64>("id", "The approval's id")
                    .empty::<204>("Revoked")
                    .error::<400>("Missing directory, or an id that is not a number")
            }),
        )
}

/// Sessions: list, create, read, rename or archive, delete, and what their
/// history shows.
fn session_routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{get_with, post_with};
    use mia_protocol::{DiffView, RevertPreview, Session, SessionDetail, SessionSummary};
    ApiRouter::new()
        .api_route(
            "/api/sessions",
            get_with(list_sessions, |op| {
                op.summary("List sessions, newest first, with their message counts")
                    .tag("sessions")
                    .json::<200, Vec<SessionSummary>>("The sessions")
            })
            .post_with(create_session, |op| {
                op.summary("Create a session (Op create_session)")
                    .tag("sessions")
                    .json::<201, Session>("The session")
                    .error::<400>("Bad input")
            }),
        )
        .api_route(
            "/api/sessions/{id}",
            get_with(get_session, |op| {
                op.summary("A session with its messages")
                    .tag("sessions")
                    .json::<200, SessionDetail>("The session and its messages")
                    .error::<404>("No such session")
            })
            .patch_with(update_session, |op| {
                op.summary("Rename or (un)archive a session (Op update_session)")
                    .tag("sessions")
                    .json::<200, Session>("The session")
            })
            .delete_with(delete_session, |op| {
                op.summary("Delete a session (Op delete_session)")
                    .tag("sessions")
                    .empty::<204>("Deleted")
                    .error::<409>("A turn is running")
            }),
        )
        .api_route(
            "/api/sessions/{id}/timeline",
            get_with(timeline, |op| {
                op.summary("The session's steps, oldest first, with what each changed")
                    .tag("sessions")
                    .json::<200, Vec<mia_protocol::TimelineStep>>("The steps")
            }),
        )
        .api_route(
            "/api/sessions/{id}/preview",
            post_with(preview, |op| {
                op.summary("What an undo, redo or revert would change, without changing anything")
                    .tag("sessions")
                    .json::<200, RevertPreview>("The preview")
            }),
        )
        .api_route(
            "/api/sessions/{id}/diff",
            get_with(diff, |op| {
                op.summary("The session's file changes: all of them, a message's, or a step's")
                    .tag("sessions")
                    .json::<200, DiffView>("The changes")
                    .error::<400>("A scope without its id")
            }),
        )
}

/// Running turns: messages, permission answers, cancel, the agent,
/// undo/redo/revert, any Op, and the event stream.
fn turn_routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{get_with, post_with};
    use mia_protocol::RevertSummary;
    use openapi::shapes::Accepted;
    /// What undo, redo and revert answer.
    fn reverted(
        op: aide::transform::TransformOperation<'_>,
    ) -> aide::transform::TransformOperation<'_> {
        op.tag("turns")
            .json::<200, RevertSummary>("Applied")
            .json::<409, RevertSummary>(
                "Conflicts: files changed outside mia-code; nothing changed (retry with force)",
            )
    }
    ApiRouter::new()
        .api_route(
            "/api/sessions/{id}/messages",
            post_with(send_message, |op| {
                op.summary("Send a user message and run a turn (Op user_message)")
                    .tag("turns")
                    .json::<202, Accepted>("Turn started; follow /api/events")
                    .error::<409>("A turn is already running")
            }),
        )
        .api_route(
            "/api/sessions/{id}/permissions/{request}",
            post_with(reply_permission, |op| {
                op.summary("Answer a permission ask (Op permission_reply)")
                    .tag("turns")
                    .json::<202, Accepted>("Answered")
                    .error::<404>("No such pending request")
            }),
        )
        .api_route(
            "/api/sessions/{id}/cancel",
            post_with(cancel, |op| {
                op.summary("Cancel the running turn (Op cancel)")
                    .tag("turns")
                    .json::<202, Accepted>("Cancelled")
            }),
        )
        .api_route(
            "/api/sessions/{id}/agent",
            post_with(switch_agent, |op| {
                op.summary("Switch the primary agent (Op switch_agent)")
                    .tag("turns")
                    .json::<202, Accepted>("Switched, or queued until the turn ends")
            }),
        )
        .api_route(
            "/api/sessions/{id}/undo",
            post_with(undo, |op| {
                reverted(op.summary("Undo the last file-changing step, or `step` (Op undo)"))
                    .optional_body()
            }),
        )
        .api_route(
            "/api/sessions/{id}/redo",
            post_with(redo, |op| {
                reverted(op.summary("Redo the last undo or revert (Op redo)")).optional_body()
            }),
        )
        .api_route(
            "/api/sessions/{id}/revert",
            post_with(revert, |op| {
                reverted(op.summary("Revert to before a message (Op revert)"))
            }),
        )
        .api_route(
            "/api/op",
            post_with(any_op, |op| {
                op.summary("Apply any Op")
                    .tag("turns")
                    .json::<200, openapi::shapes::OpAnswer>(
                        "A session, a revert's summary, or a compaction's result",
                    )
                    .json::<201, mia_protocol::ForkResult>("Forked")
                    .json::<202, Accepted>("Accepted; follow /api/events")
                    .json::<409, RevertSummary>("A revert stopped by conflicts: nothing changed")
            }),
        )
        .api_route(
            "/api/events",
            get_with(events, |op| {
                op.summary("Server-Sent Events: a `hello` (epoch, reset), then each Event (`event:` its type, `id:` its number in its session), and `lagged` when events were missed")
                    .tag("turns")
                    .input::<Query<TokenQuery>>()
                    .events::<mia_protocol::Event>("text/event-stream of Events")
                    .error::<400>("A bad session id, or `since` without `epoch`")
            }),
        )
}

/// `GET /api/openapi.json`.
async fn openapi_json() -> Json<Value> {
    Json(openapi())
}

/// Security headers on every response: the UI's CSP, no sniffing, no framing.
async fn ui_headers(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(UI_CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
    res
}

/// Connections served at once; more are closed on accept (a local process
/// cannot exhaust the server by holding sockets open).
pub const MAX_CONNECTIONS: usize = 512;
/// A request's headers must arrive within this time (slowloris).
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// A new connection must deliver its first request's headers within this
/// time, or it is closed.
pub const FIRST_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A connection with no bytes either way for this long is closed (an open
/// event stream sends a keep-alive every 15 s, so it never idles).
pub const IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// After the shutdown signal, open requests (an event stream included) get
/// this long before the server returns.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// Serve until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    runtime: Runtime,
    token: String,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(
        listener,
        runtime,
        ServerOptions {
            token,
            ..Default::default()
        },
        shutdown,
    )
    .await
}

/// Serve with [`ServerOptions`] until `shutdown` resolves. The Host check is
/// always on for a socket; the bound address itself is an allowed host when
/// it is not loopback (the CLI refuses that without `--allow-remote`).
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    runtime: Runtime,
    mut opts: ServerOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr: SocketAddr = listener.local_addr()?;
    opts.check_host = true;
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        opts.allowed_hosts.push(addr.ip().to_string());
    }
    let app = router_with(runtime, opts);
    serve_router(listener, app, shutdown).await
}

/// The accept loop (mia-http) with `serve`'s numbers.
async fn serve_router(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = mia_http::Limits {
        max_connections: MAX_CONNECTIONS,
        header_read_timeout: HEADER_READ_TIMEOUT,
        first_request: FIRST_REQUEST_TIMEOUT,
        idle: IDLE_TIMEOUT,
        shutdown_grace: SHUTDOWN_GRACE,
    };
    mia_http::serve(listener, app, limits, shutdown).await
}

pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    let body = ApiError {
        error: message.into(),
        kind: None,
    };
    (status, Json(body)).into_response()
}

fn core_error(e: CoreError) -> Response {
    let status = match e.kind() {
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        // Refused because work would be lost: a 409 that says so, for a
        // front end to offer "anyway" (force keeps a copy in the trash).
        ErrorKind::WouldLose => {
            let body = ApiError {
                error: e.to_string(),
                kind: Some("would_lose".into()),
            };
            return (StatusCode::CONFLICT, Json(body)).into_response();
        }
        ErrorKind::Busy | ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::BadInput => StatusCode::BAD_REQUEST,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.to_string())
}

async fn host_guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if !state.check_host {
        return next.run(req).await;
    }
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    }
    .to_ascii_lowercase();
    let loopback = matches!(name.as_str(), "127.0.0.1" | "localhost" | "::1");
    if !loopback && !state.allowed_hosts.contains(&name) {
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "host {host:?} is not allowed: this server answers only {}",
                if state.allowed_hosts.is_empty() {
                    "on loopback (127.0.0.1, localhost, ::1)".to_string()
                } else {
                    format!("loopback and {}", state.allowed_hosts.join(", "))
                }
            ),
        );
    }
    next.run(req).await
}

/// A state-changing request must come from this server's own origin: a
/// web page elsewhere (even one that guessed the token) is refused by its
/// `Origin` or `Sec-Fetch-Site` header. Requests without them (the CLI,
/// scripts) pass: the token is what authorises them.
async fn same_origin(req: Request, next: Next) -> Response {
    let changes = !matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD | axum::http::Method::OPTIONS
    );
    if changes {
        let h = req.headers();
        let host = h
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if let Some(origin) = h.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("null");
            let same = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"))
                .is_some_and(|o| o.eq_ignore_ascii_case(host));
            if !same {
                return error(
                    StatusCode::FORBIDDEN,
                    format!(
                        "cross-origin request from {origin:?} refused: changes must come from this server's own page"
                    ),
                );
            }
        }
        if let Some(site) = h.get("sec-fetch-site").and_then(|v| v.to_str().ok())
            && !matches!(site, "same-origin" | "none")
        {
            return error(
                StatusCode::FORBIDDEN,
                format!(
                    "request with Sec-Fetch-Site: {site} refused: changes must come from this server's own page"
                ),
            );
        }
    }
    next.run(req).await
}

/// Unknown `/api/*` paths: a JSON 404, not the web UI's page.
async fn api_not_found(req: Request) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!(
            "no API route {} {}; the routes are listed at /api/openapi.json",
            req.method(),
            req.uri().path()
        ),
    )
}

/// Every `/api` answer is `Cache-Control: no-store`, and every rejection
/// (including axum's own, e.g. a malformed JSON body) has the documented
/// `{"error": …}` body.
async fn api_errors(req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    let (mut parts, body) = res.into_parts();
    parts.headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if parts.status.as_u16() < 400 || is_json {
        return Response::from_parts(parts, body);
    }
    let text = match axum::body::to_bytes(body, 64 * 1024).await {
        Ok(b) => String::from_utf8_lossy(&b).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = if text.is_empty() {
        parts
            .status
            .canonical_reason()
            .unwrap_or("request refused")
            .to_string()
    } else {
        text
    };
    let mut out = error(parts.status, message);
    out.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    for (k, v) in parts.headers.iter() {
        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH && k != header::CACHE_CONTROL {
            out.headers_mut().insert(k.clone(), v.clone());
        }
    }
    out
}

#[derive(Deserialize, JsonSchema)]
struct TokenQuery {
    /// The token, for `/api/events` only (`EventSource` cannot set headers).
    token: Option<String>,
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq as _;
    // Lengths are not secret (every token has the same length).
    a.ct_eq(b).into()
}

async fn auth(
    State(state): State<AppState>,
    Query(q): Query<TokenQuery>,
    headers: HeaderMap,
    req: Request,
    next: Next,
) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::to_string);
    // `?token=` only for the event stream (EventSource cannot set headers):
    // a token in a URL ends up in logs and histories.
    let query_ok = req.uri().path() == "/api/events";
    let given = bearer.or(q.token.filter(|_| query_ok));
    match given {
        Some(t) if constant_time_eq(t.as_bytes(), state.token.as_bytes()) => next.run(req).await,
        Some(_) => error(StatusCode::UNAUTHORIZED, "wrong token"),
        None => error(
            StatusCode::UNAUTHORIZED,
            "missing token: send `Authorization: Bearer <token>` (printed by `mia-code serve` and stored in $MIA_CODE_HOME/server.json)",
        ),
    }
}

/// Needs no token: liveness, the version, and whether this is the scripted
/// demo (so the token screen can say so).
async fn health(State(s): State<AppState>) -> Json<Value> {
    Json(json!({ "ok": true, "version": env!("CARGO_PKG_VERSION"), "demo": s.demo }))
}

/// A request that could not be understood: answered with 400 and the reason.
struct BadRequest(String);

impl IntoResponse for BadRequest {
    fn into_response(self) -> Response {
        error(StatusCode::BAD_REQUEST, self.0)
    }
}

/// The `{id}` of a session's routes.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct SessionPath {
    /// The session's id.
    #[schemars(extend("format" = "uuid"))]
    pub(crate) id: String,
}

pub(crate) fn parse_id(id: &str) -> Result<SessionId, BadRequest> {
    id.parse()
        .map_err(|e: mia_protocol::IdParseError| BadRequest(e.to_string()))
}

#[derive(Deserialize, JsonSchema)]
struct ListQuery {
    /// Only this project's sessions (its folder).
    project: Option<String>,
    /// Include archived sessions.
    #[serde(default)]
    archived: bool,
    /// At most this many.
    limit: Option<u32>,
}

async fn info(State(s): State<AppState>) -> Response {
    Json(mia_protocol::ServerInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        demo: s.demo,
        project: s.project.clone(),
        home: s.runtime.options().paths.home.display().to_string(),
    })
    .into_response()
}

async fn projects(State(s): State<AppState>) -> Response {
    reply(s.runtime.projects().await)
}

fn reply<T: serde::Serialize>(r: Result<T, CoreError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => core_error(e),
    }
}

async fn list_sessions(State(s): State<AppState>, Query(q): Query<ListQuery>) -> Response {
    reply(
        s.runtime
            .list_sessions(mia_core::SessionListQuery {
                project: q.project,
                archived: q.archived,
                limit: q.limit,
                ..Default::default()
            })
            .await,
    )
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "CreateSession")]
struct CreateBody {
    directory: String,
    title: Option<String>,
    agent: Option<String>,
    model: Option<String>,
}

async fn create_session(State(s): State<AppState>, Json(b): Json<CreateBody>) -> Response {
    let op = Op::CreateSession {
        directory: b.directory,
        title: b.title,
        agent: b.agent,
        model: b.model,
    };
    match s.runtime.submit(op).await {
        Ok(OpResult::Session(session)) => (StatusCode::CREATED, Json(session)).into_response(),
        Ok(OpResult::Reverted(summary)) => Json(summary).into_response(),
        Ok(OpResult::Forked(f)) => (StatusCode::CREATED, Json(f)).into_response(),
        Ok(OpResult::Compacted(c)) => Json(c).into_response(),
        Ok(OpResult::Done) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => core_error(e),
    }
}

#[derive(Deserialize, Default, JsonSchema)]
struct DetailQuery {
    /// Include the messages a compaction summary replaced (the archive).
    #[serde(default)]
    archived: bool,
}

async fn get_session(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Query(q): Query<DetailQuery>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.session_detail_with(id, q.archived).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "UpdateSession")]
struct UpdateBody {
    /// The new title.
    title: Option<String>,
    /// Archive (true) or unarchive (false).
    archived: Option<bool>,
}

async fn update_session(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Json(b): Json<UpdateBody>,
) -> Response {
    match parse_id(&id) {
        Ok(session_id) => {
            submit(
                &s,
                Op::UpdateSession {
                    session_id,
                    title: b.title,
                    archived: b.archived,
                },
            )
            .await
        }
        Err(r) => r.into_response(),
    }
}

async fn delete_session(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
) -> Response {
    match parse_id(&id) {
        Ok(session_id) => match s.runtime.submit(Op::DeleteSession { session_id }).await {
            Ok(_) => StatusCode::NO_CONTENT.into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

async fn timeline(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.timeline(id).await),
        Err(r) => r.into_response(),
    }
}

async fn preview(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Json(action): Json<mia_protocol::HistoryAction>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.preview(id, action).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
struct DiffQuery {
    /// `session` (default), `message` (with `message_id`) or `step` (with `step`).
    scope: Option<String>,
    message_id: Option<String>,
    step: Option<String>,
}

async fn diff(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Query(q): Query<DiffQuery>,
) -> Response {
    let id = match parse_id(&id) {
        Ok(id) => id,
        Err(r) => return r.into_response(),
    };
    let scope = match (
        q.scope.as_deref().unwrap_or("session"),
        q.message_id,
        q.step,
    ) {
        ("session", _, _) => mia_protocol::DiffScope::Session,
        ("message", Some(message_id), _) => mia_protocol::DiffScope::Message { message_id },
        ("step", _, Some(step)) => mia_protocol::DiffScope::Step { step },
        (other, _, _) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "scope `{other}` needs its id: use scope=session, scope=message&message_id=ID or scope=step&step=ID"
                ),
            );
        }
    };
    reply(s.runtime.diff(id, scope).await)
}

/// `?directory=`: the project folder a route is about.
#[derive(Deserialize, JsonSchema)]
struct DirQuery {
    /// The project folder.
    #[schemars(required)]
    directory: Option<String>,
}

/// `?directory=` where the project is optional.
#[derive(Deserialize, JsonSchema)]
struct SettingsQuery {
    /// The project folder (its settings too; default: the global ones only).
    directory: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct PermissionsQuery {
    /// The project folder.
    #[schemars(required)]
    directory: Option<String>,
    /// The agent whose rules (default: the project's default agent).
    agent: Option<String>,
}

fn directory(directory: Option<&str>) -> Result<std::path::PathBuf, BadRequest> {
    match directory.filter(|d| !d.is_empty()) {
        Some(d) => Ok(std::path::PathBuf::from(d)),
        None => Err(BadRequest("missing ?directory=<project folder>".into())),
    }
}

async fn agents(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    match directory(q.directory.as_deref()) {
        Ok(d) => {
            let rt = s.runtime.clone();
            reply(blocking(move || rt.agents(&d)).await)
        }
        Err(r) => r.into_response(),
    }
}

async fn files(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    match directory(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.files(d).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "OpenInEditor")]
struct OpenBody {
    /// The project folder.
    directory: String,
    /// The file, relative to the project.
    path: String,
    /// The line to open at.
    #[serde(default)]
    line: Option<u32>,
}

/// "Open in editor": a project file in the editor of the machine mia-code runs on.
async fn open_in_editor(State(s): State<AppState>, Json(b): Json<OpenBody>) -> Response {
    match s
        .runtime
        .open_in_editor(std::path::Path::new(&b.directory), &b.path, b.line)
        .await
    {
        Ok(command) => Json(serde_json::json!({ "command": command })).into_response(),
        Err(e) => core_error(e),
    }
}

/// Run a runtime call that may block (the OS keychain, config files) off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CoreError> + Send + 'static,
) -> Result<T, CoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CoreError::Internal(format!("a background task failed: {e}")))?
}

async fn settings(State(s): State<AppState>, Query(q): Query<SettingsQuery>) -> Response {
    let dir = q
        .directory
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from);
    let rt = s.runtime.clone();
    reply(blocking(move || rt.settings(dir.as_deref())).await)
}

async fn update_settings(
    State(s): State<AppState>,
    Query(q): Query<SettingsQuery>,
    Json(update): Json<mia_protocol::SettingsUpdate>,
) -> Response {
    let rt = s.runtime.clone();
    if let Err(e) = blocking(move || rt.update_settings(update)).await {
        return core_error(e);
    }
    settings(State(s), Query(q)).await
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "ProviderKey")]
struct KeyBody {
    /// The API key.
    key: String,
}

/// The `{provider}` of the key routes.
#[derive(Deserialize, JsonSchema)]
struct ProviderPath {
    /// The provider's id (e.g. `openai`).
    provider: String,
}

async fn set_key(
    State(s): State<AppState>,
    Path(ProviderPath { provider }): Path<ProviderPath>,
    Json(b): Json<KeyBody>,
) -> Response {
    let rt = s.runtime.clone();
    match blocking(move || rt.set_key(&provider, &b.key)).await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => core_error(e),
    }
}

async fn delete_key(
    State(s): State<AppState>,
    Path(ProviderPath { provider }): Path<ProviderPath>,
) -> Response {
    let rt = s.runtime.clone();
    match blocking(move || rt.delete_key(&provider)).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => core_error(e),
    }
}

async fn permissions(State(s): State<AppState>, Query(q): Query<PermissionsQuery>) -> Response {
    match directory(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.permissions_view(d, q.agent.clone()).await),
        Err(r) => r.into_response(),
    }
}

/// Every pending ask of the project's sessions (the attention queue).
async fn asks(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    match directory(q.directory.as_deref()) {
        Ok(d) => Json(s.runtime.pending_asks(&d)).into_response(),
        Err(r) => r.into_response(),
    }
}

async fn approvals(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    match directory(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.approvals(d).await),
        Err(r) => r.into_response(),
    }
}

async fn revoke_approval(
    State(s): State<AppState>,
    Path(id): Path<i64>,
    Query(q): Query<DirQuery>,
) -> Response {
    match directory(q.directory.as_deref()) {
        Ok(d) => match s.runtime.revoke_approval(d, id).await {
            Ok(()) => StatusCode::NO_CONTENT.into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

async fn submit(s: &AppState, op: Op) -> Response {
    match s.runtime.submit(op).await {
        Ok(OpResult::Session(session)) => Json(session).into_response(),
        // A revert stopped by conflicts changed nothing: 409 with the details.
        Ok(OpResult::Reverted(summary)) if !summary.applied => {
            (StatusCode::CONFLICT, Json(summary)).into_response()
        }
        Ok(OpResult::Reverted(summary)) => Json(summary).into_response(),
        Ok(OpResult::Forked(f)) => (StatusCode::CREATED, Json(f)).into_response(),
        Ok(OpResult::Compacted(c)) => Json(c).into_response(),
        Ok(OpResult::Done) => (StatusCode::ACCEPTED, Json(json!({ "ok": true }))).into_response(),
        Err(e) => core_error(e),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "UserMessage")]
struct MessageBody {
    text: String,
    agent: Option<String>,
    model: Option<String>,
}

async fn send_message(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Json(b): Json<MessageBody>,
) -> Response {
    match parse_id(&id) {
        Ok(session_id) => {
            submit(
                &s,
                Op::UserMessage {
                    session_id,
                    text: b.text,
                    agent: b.agent,
                    model: b.model,
                },
            )
            .await
        }
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "PermissionReply")]
struct ReplyBody {
    reply: PermissionReplyKind,
}

/// The `{id}` and `{request}` of a permission answer.
#[derive(Deserialize, JsonSchema)]
struct PermissionPath {
    /// The session's id.
    #[schemars(extend("format" = "uuid"))]
    id: String,
    /// The pending ask's request id.
    request: String,
}

async fn reply_permission(
    State(s): State<AppState>,
    Path(PermissionPath {
        id,
        request: request_id,
    }): Path<PermissionPath>,
    Json(b): Json<ReplyBody>,
) -> Response {
    match parse_id(&id) {
        Ok(session_id) => {
            submit(
                &s,
                Op::PermissionReply {
                    session_id,
                    request_id,
                    reply: b.reply,
                },
            )
            .await
        }
        Err(r) => r.into_response(),
    }
}

async fn cancel(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
) -> Response {
    match parse_id(&id) {
        Ok(session_id) => submit(&s, Op::Cancel { session_id }).await,
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "SwitchAgent")]
struct AgentBody {
    agent: String,
}

async fn switch_agent(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Json(b): Json<AgentBody>,
) -> Response {
    match parse_id(&id) {
        Ok(session_id) => {
            submit(
                &s,
                Op::SwitchAgent {
                    session_id,
                    agent: b.agent,
                },
            )
            .await
        }
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, Default, JsonSchema)]
#[schemars(rename = "Force")]
struct ForceBody {
    /// Go ahead over files changed outside mia-code (a copy goes to the trash).
    #[serde(default)]
    force: bool,
    /// Undo only: the step to undo (default: the last file-changing one).
    #[serde(default)]
    step: Option<String>,
}

async fn undo(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    body: Option<Json<ForceBody>>,
) -> Response {
    let (force, step) = body.map(|b| (b.0.force, b.0.step)).unwrap_or_default();
    match parse_id(&id) {
        Ok(session_id) => {
            submit(
                &s,
                Op::Undo {
                    session_id,
                    step,
                    force,
                },
            )
            .await
        }
        Err(r) => r.into_response(),
    }
}

async fn redo(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    body: Option<Json<ForceBody>>,
) -> Response {
    let force = body.map(|b| b.0.force).unwrap_or_default();
    match parse_id(&id) {
        Ok(session_id) => submit(&s, Op::Redo { session_id, force }).await,
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "Revert")]
struct RevertBody {
    /// The message to revert to before.
    message_id: String,
    /// Go ahead over files changed outside mia-code (a copy goes to the trash).
    #[serde(default)]
    force: bool,
}

async fn revert(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Json(b): Json<RevertBody>,
) -> Response {
    let session_id = match parse_id(&id) {
        Ok(id) => id,
        Err(r) => return r.into_response(),
    };
    let message_id = match b.message_id.parse() {
        Ok(m) => m,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("{e}")),
    };
    submit(
        &s,
        Op::Revert {
            session_id,
            message_id,
            force: b.force,
        },
    )
    .await
}

async fn any_op(State(s): State<AppState>, Json(op): Json<Op>) -> Response {
    submit(&s, op).await
}

#[derive(Deserialize, JsonSchema)]
struct EventsQuery {
    /// Only this session's Events.
    session: Option<String>,
    /// With `since`: resume a stream of this process (the `hello` epoch).
    epoch: Option<String>,
    /// `SESSION:SEQ,...`: the last Event number seen of each session.
    since: Option<String>,
}

async fn events(State(s): State<AppState>, Query(q): Query<EventsQuery>) -> Response {
    let filter = match q.session.as_deref().map(parse_id).transpose() {
        Ok(f) => f,
        Err(r) => return r.into_response(),
    };
    let resume = match (&q.epoch, &q.since) {
        (Some(epoch), since) => {
            match mia_core::Resume::parse(epoch, since.as_deref().unwrap_or("")) {
                Ok(r) => Some(r),
                Err(e) => return BadRequest(e.to_string()).into_response(),
            }
        }
        (None, Some(_)) => {
            return BadRequest("`since` needs the `epoch` it was counted in".into())
                .into_response();
        }
        (None, None) => None,
    };
    let events = s.runtime.events_since(filter, resume.as_ref());
    let stream = futures_util::stream::unfold(events, |mut events| async move {
        let item = events.next().await?;
        let sse = match item {
            EventItem::Hello { epoch, reset } => SseEvent::default()
                .event("hello")
                .json_data(serde_json::json!({ "epoch": epoch, "reset": reset.to_json() }))
                .unwrap_or_else(|_| SseEvent::default().event("error")),
            EventItem::Event { seq, event } => {
                let kind = serde_json::to_value(&*event)
                    .ok()
                    .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_else(|| "event".into());
                let sse = SseEvent::default()
                    .event(kind)
                    .json_data(&*event)
                    .unwrap_or_else(|_| SseEvent::default().event("error"));
                // The session's Event number (none for an Event of no session).
                if seq > 0 {
                    sse.id(seq.to_string())
                } else {
                    sse
                }
            }
            // A slow client missed events: it resumes (or reloads).
            EventItem::Lagged(n) => SseEvent::default().event("lagged").data(n.to_string()),
        };
        Some((Ok::<_, std::convert::Infallible>(sse), events))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(std::time::Duration::from_secs(15)))
        .into_response()
}
