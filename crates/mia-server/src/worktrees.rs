//! Worktree routes: experiment worktrees and the comparison of attempts
//! (`/api/worktrees...`), thin over `mia_core::Runtime::worktree_*`.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_core::{CoreError, OpResult};
use mia_protocol::Op;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{AppState, BadRequest, core_error, error, reply};

/// The `/api/worktrees...` routes (the caller adds authentication).
pub(crate) fn routes() -> axum::Router<AppState> {
    use axum::routing::{delete, get, post};
    axum::Router::new()
        .route("/api/worktrees", get(worktree_list).post(worktree_create))
        .route("/api/worktrees/compare", get(worktree_compare))
        .route("/api/worktrees/try", post(worktree_try))
        .route("/api/worktrees/trash", get(worktree_trash))
        .route(
            "/api/worktrees/trash/{id}/restore",
            post(worktree_trash_restore),
        )
        .route("/api/worktrees/{name}", delete(worktree_remove))
        .route("/api/worktrees/{name}/reset", post(worktree_reset))
        .route("/api/worktrees/{name}/diff", get(worktree_diff))
        .route("/api/worktrees/{name}/take", post(worktree_take))
        .route("/api/worktrees/{name}/promote", post(worktree_promote))
}

#[derive(Deserialize)]
struct WtDirQuery {
    directory: Option<String>,
    #[serde(default)]
    force: bool,
}

fn wt_dir(d: Option<&str>) -> Result<std::path::PathBuf, BadRequest> {
    match d.filter(|d| !d.is_empty()) {
        Some(d) => Ok(std::path::PathBuf::from(d)),
        None => Err(BadRequest("missing directory (the project folder)".into())),
    }
}

async fn worktree_list(State(s): State<AppState>, Query(q): Query<WtDirQuery>) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.worktree_list(d).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct WtCreateBody {
    directory: String,
    name: Option<String>,
    base: Option<String>,
}

async fn worktree_create(State(s): State<AppState>, Json(b): Json<WtCreateBody>) -> Response {
    match wt_dir(Some(&b.directory)) {
        Ok(d) => match s
            .runtime
            .worktree_create(d, b.name, b.base, Default::default())
            .await
        {
            Ok(c) => (StatusCode::CREATED, Json(c)).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

async fn worktree_remove(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Query(q): Query<WtDirQuery>,
) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.worktree_remove(d, name, q.force).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct WtBody {
    directory: String,
}

async fn worktree_reset(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Json(b): Json<WtBody>,
) -> Response {
    match wt_dir(Some(&b.directory)) {
        Ok(d) => match s.runtime.worktree_reset(d, name).await {
            Ok(trash) => Json(json!({ "trash": trash })).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct WtCompareQuery {
    directory: Option<String>,
    a: String,
    b: String,
    #[serde(default)]
    check: bool,
}

async fn worktree_compare(State(s): State<AppState>, Query(q): Query<WtCompareQuery>) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => reply(
            s.runtime
                .worktree_compare(
                    d,
                    q.a,
                    q.b,
                    mia_core::worktrees::CompareOptions { check: q.check },
                )
                .await,
        ),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct WtDiffQuery {
    directory: Option<String>,
    base: String,
    path: String,
}

async fn worktree_diff(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Query(q): Query<WtDiffQuery>,
) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => match s.runtime.worktree_file_diff(d, name, q.base, q.path).await {
            Ok(diff) => Json(json!({ "diff": diff })).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct WtTakeBody {
    directory: String,
    path: String,
    into: String,
    /// Take it even over the target's own version (a copy goes to the trash).
    #[serde(default)]
    force: bool,
}

async fn worktree_trash(State(s): State<AppState>, Query(q): Query<WtDirQuery>) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.worktree_trash(d).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct WtRestoreBody {
    directory: String,
    /// Where the files go (default: where they were).
    #[serde(default)]
    into: Option<String>,
}

async fn worktree_trash_restore(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Json(b): Json<WtRestoreBody>,
) -> Response {
    match wt_dir(Some(&b.directory)) {
        Ok(d) => match s
            .runtime
            .worktree_trash_restore(d, id, b.into.map(std::path::PathBuf::from))
            .await
        {
            Ok((trash, into)) => {
                Json(json!({ "trash": trash, "into": into.display().to_string() })).into_response()
            }
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

async fn worktree_take(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Json(b): Json<WtTakeBody>,
) -> Response {
    match wt_dir(Some(&b.directory)) {
        Ok(d) => match s
            .runtime
            .worktree_take(d, name, b.path, b.into, b.force)
            .await
        {
            Ok(trash) => Json(json!({ "trash": trash })).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct WtPromoteBody {
    directory: String,
    /// `merge` (default) or `keep_branch`.
    #[serde(default)]
    mode: Option<String>,
    /// Merge even over ignored files of the main checkout (a copy goes to the trash).
    #[serde(default)]
    force: bool,
}

async fn worktree_promote(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Json(b): Json<WtPromoteBody>,
) -> Response {
    let keep = match b.mode.as_deref() {
        None | Some("merge") => false,
        Some("keep_branch") => true,
        Some(other) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("mode {other:?}: use \"merge\" or \"keep_branch\""),
            );
        }
    };
    match wt_dir(Some(&b.directory)) {
        Ok(d) => reply(s.runtime.worktree_promote(d, name, keep, b.force).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct WtTryBody {
    directory: String,
    text: String,
    /// How many attempts (2-4).
    n: u32,
    agent: Option<String>,
    model: Option<String>,
}

/// "Try N ways": one prompt started in N new worktrees, each its own
/// session, running concurrently. Answers the sessions and worktrees made.
async fn worktree_try(State(s): State<AppState>, Json(b): Json<WtTryBody>) -> Response {
    if !(2..=4).contains(&b.n) {
        return error(StatusCode::BAD_REQUEST, "n must be 2, 3 or 4 attempts");
    }
    let dir = match wt_dir(Some(&b.directory)) {
        Ok(d) => d,
        Err(r) => return r.into_response(),
    };
    let mut out: Vec<Value> = Vec::new();
    // A failure part-way answers the error with the attempts already made
    // (they are real worktrees and sessions the user may want to keep).
    let fail = |e: CoreError, out: &[Value]| {
        let message = e.to_string();
        let r = core_error(e);
        if out.is_empty() {
            return r;
        }
        (
            r.status(),
            Json(json!({
                "error": format!(
                    "{message} (after {} attempt(s) had started; they are listed in `attempts`)",
                    out.len()
                ),
                "attempts": out,
            })),
        )
            .into_response()
    };
    for _ in 0..b.n {
        let created = match s
            .runtime
            .worktree_create(dir.clone(), None, None, Default::default())
            .await
        {
            Ok(c) => c,
            Err(e) => return fail(e, &out),
        };
        let session = match s
            .runtime
            .submit(Op::CreateSession {
                directory: created.path.clone(),
                title: Some(format!(
                    "{} ({})",
                    b.text.chars().take(50).collect::<String>(),
                    created.name
                )),
                agent: b.agent.clone(),
                model: b.model.clone(),
            })
            .await
        {
            Ok(OpResult::Session(session)) => session,
            Ok(_) => return error(StatusCode::INTERNAL_SERVER_ERROR, "no session was created"),
            Err(e) => return fail(e, &out),
        };
        if let Err(e) = s
            .runtime
            .submit(Op::UserMessage {
                session_id: session.id,
                text: b.text.clone(),
                agent: b.agent.clone(),
                model: b.model.clone(),
            })
            .await
        {
            return fail(e, &out);
        }
        out.push(json!({ "worktree": created, "session": session }));
    }
    (StatusCode::CREATED, Json(json!({ "attempts": out }))).into_response()
}
