//! Fork and compaction routes (specs 020, 019): fork a session, promote a
//! fork, a project's fork tree, two sessions' changes side by side, compact
//! now; thin over `mia_core::Runtime::{fork, promote, fork_tree,
//! compare_sessions, compact}`.

use aide::axum::ApiRouter;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_protocol::MessageId;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::openapi::Answers as _;
use crate::{AppState, BadRequest, SessionPath, core_error, parse_id, reply};

/// The fork routes (the caller adds authentication).
pub(crate) fn routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{get_with, post_with};
    use mia_protocol::{CompactResult, ForkResult, ForkTreeNode, Session, SessionCompare};
    ApiRouter::new()
        .api_route(
            "/api/sessions/tree",
            get_with(tree, |op| {
                op.summary("The fork tree of a project (its sessions and its worktrees' sessions), forks nested under their parents")
                    .json::<200, Vec<ForkTreeNode>>("The tree's roots")
                    .error::<400>("Missing project")
            }),
        )
        .api_route(
            "/api/sessions/{id}/fork",
            post_with(fork, |op| {
                op.summary("Fork the session at a message (Op fork): the new session, with its worktree for a fork with files")
                    .optional_body()
                    .json::<201, ForkResult>("Forked")
                    .error::<400>("InvalidForkPointError or ForkDepthExceededError, with what to do")
                    .error::<404>("No such session")
            }),
        )
        .api_route(
            "/api/sessions/{id}/promote",
            post_with(promote, |op| {
                op.summary("Make a fork a top-level session (Op promote); its fork metadata is kept")
                    .json::<200, Session>("The session")
                    .error::<400>("Not a fork")
            }),
        )
        .api_route(
            "/api/sessions/{id}/compare",
            get_with(compare, |op| {
                op.summary("This session's and another's file changes since they diverged, side by side")
                    .json::<200, SessionCompare>("The comparison")
            }),
        )
        .api_route(
            "/api/sessions/{id}/compact",
            post_with(compact, |op| {
                op.summary("Compact now (Op compact): older messages are summarised and archived, the newest kept verbatim")
                    .json::<200, CompactResult>("Compacted")
                    .error::<400>("Nothing to compact, or compaction is off")
                    .error::<409>("A turn is running")
            }),
        )
        .with_path_items(|item| item.tag("forks"))
}

/// `/compact`: summarise the session's older messages now (409 while a turn runs).
async fn compact(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.compact(id).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, Default, JsonSchema)]
#[schemars(rename = "Fork")]
struct ForkBody {
    /// The fork point (default: the session's last message).
    message_id: Option<String>,
    /// Also fork the files: a new worktree with the project as it was at the fork point.
    #[serde(default)]
    with_files: bool,
}

async fn fork(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    body: Option<Json<ForkBody>>,
) -> Response {
    let session_id = match parse_id(&id) {
        Ok(id) => id,
        Err(r) => return r.into_response(),
    };
    let b = body.map(|b| b.0).unwrap_or_default();
    let message_id = match b.message_id.as_deref().filter(|m| !m.is_empty()) {
        None => None,
        Some(m) => match m.parse::<MessageId>() {
            Ok(m) => Some(m),
            Err(e) => {
                return BadRequest(format!(
                    "message_id `{m}` is not a message id ({e}); omit it to fork at the last message"
                ))
                .into_response();
            }
        },
    };
    match s.runtime.fork(session_id, message_id, b.with_files).await {
        Ok(forked) => (StatusCode::CREATED, Json(forked)).into_response(),
        Err(e) => core_error(e),
    }
}

async fn promote(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.promote(id).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
struct TreeQuery {
    /// The project folder.
    #[schemars(required)]
    project: Option<String>,
    /// Include archived sessions.
    #[serde(default)]
    archived: bool,
}

async fn tree(State(s): State<AppState>, Query(q): Query<TreeQuery>) -> Response {
    match q.project.as_deref().filter(|p| !p.is_empty()) {
        Some(p) => reply(
            s.runtime
                .fork_tree(std::path::Path::new(p), q.archived)
                .await,
        ),
        None => BadRequest("missing ?project=<project folder>".into()).into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
struct CompareQuery {
    /// The session to compare with.
    #[schemars(required, extend("format" = "uuid"))]
    with: Option<String>,
}

async fn compare(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Query(q): Query<CompareQuery>,
) -> Response {
    let a = match parse_id(&id) {
        Ok(id) => id,
        Err(r) => return r.into_response(),
    };
    let b = match q.with.as_deref() {
        Some(w) => match parse_id(w) {
            Ok(id) => id,
            Err(r) => return r.into_response(),
        },
        None => {
            return BadRequest("missing ?with=<session id> (the session to compare with)".into())
                .into_response();
        }
    };
    reply(s.runtime.compare_sessions(a, b).await)
}
