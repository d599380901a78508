//! Fork and compaction routes (specs 020, 019): fork a session, promote a
//! fork, a project's fork tree, two sessions' changes side by side, compact
//! now; thin over `mia_core::Runtime::{fork, promote, fork_tree,
//! compare_sessions, compact}`.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_protocol::MessageId;
use serde::Deserialize;

use crate::{AppState, BadRequest, core_error, parse_id, reply};

/// The fork routes (the caller adds authentication).
pub(crate) fn routes() -> axum::Router<AppState> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/api/sessions/tree", get(tree))
        .route("/api/sessions/{id}/fork", post(fork))
        .route("/api/sessions/{id}/promote", post(promote))
        .route("/api/sessions/{id}/compare", get(compare))
        .route("/api/sessions/{id}/compact", post(compact))
}

/// `/compact`: summarise the session's older messages now (409 while a turn runs).
async fn compact(State(s): State<AppState>, Path(id): Path<String>) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.compact(id).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, Default)]
struct ForkBody {
    message_id: Option<String>,
    #[serde(default)]
    with_files: bool,
}

async fn fork(
    State(s): State<AppState>,
    Path(id): Path<String>,
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

async fn promote(State(s): State<AppState>, Path(id): Path<String>) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.promote(id).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct TreeQuery {
    project: Option<String>,
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

#[derive(Deserialize)]
struct CompareQuery {
    with: Option<String>,
}

async fn compare(
    State(s): State<AppState>,
    Path(id): Path<String>,
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
