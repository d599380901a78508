//! Worktree routes: experiment worktrees and the comparison of attempts
//! (`/api/worktrees...`), thin over `mia_core::Runtime::worktree_*`.

use aide::axum::ApiRouter;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_core::{CoreError, OpResult};
use mia_protocol::Op;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::openapi::{Answers as _, shapes};
use crate::{AppState, BadRequest, core_error, error, reply};

/// The `/api/worktrees...` routes (the caller adds authentication).
pub(crate) fn routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{get_with, post_with};
    use mia_protocol::{TrashView, WorktreeCreated, WorktreeView};
    ApiRouter::new()
        .api_route(
            "/api/worktrees",
            get_with(worktree_list, |op| {
                op.summary("The project's mia-code worktrees with status and sessions")
                    .ignores("force")
                    .json::<200, Vec<WorktreeView>>("The worktrees")
            })
            .post_with(worktree_create, |op| {
                op.summary("Create a worktree; start-script lines stream as worktree_log events")
                    .json::<201, WorktreeCreated>("Created")
                    .error::<400>("Bad name or base")
                    .error::<409>("Name, branch or directory taken")
            }),
        )
        .api_route(
            "/api/worktrees/try",
            post_with(worktree_try, |op| {
                op.summary("Try N ways: one prompt in N (2-4) new worktrees, each its own session")
                    .json::<201, shapes::Attempts>("The attempts, running")
                    .error::<400>("n is not 2, 3 or 4")
                    .json::<409, shapes::AttemptsFailed>(
                        "Failed part-way: the error, with the attempts already made (a failure answers the runtime's status, 409 or another)",
                    )
            }),
        )
        .api_route(
            "/api/worktrees/trash",
            get_with(worktree_trash, |op| {
                op.summary("What forced worktree operations and resets kept (newest first)")
                    .ignores("force")
                    .json::<200, Vec<TrashView>>("The trash")
            }),
        )
        .api_route(
            "/api/worktrees/trash/{id}/restore",
            post_with(worktree_trash_restore, |op| {
                op.summary("Bring a trash entry back: files where they were (or into), commits as the branch mia-code-restored/<id>")
                    .json::<200, shapes::Restored>("Restored")
                    .error::<409>("A file there differs: nothing restored")
            }),
        )
        .merge(attempt_routes())
        .with_path_items(|item| item.tag("worktrees"))
}

/// The routes of one worktree (an attempt), and the comparison of two.
fn attempt_routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{delete_with, get_with, post_with};
    use mia_protocol::{ComparisonView, PromotedView, WorktreeView};
    ApiRouter::new()
        .api_route(
            "/api/worktrees/compare",
            get_with(worktree_compare, |op| {
                op.summary(
                    "Compare two attempts (worktree names or main) against their common base",
                )
                .json::<200, ComparisonView>("The comparison")
            }),
        )
        .api_route(
            "/api/worktrees/between",
            get_with(worktree_between, |op| {
                op.summary("One file of attempt A against attempt B's: the direct A↔B diff")
                    .json::<200, mia_protocol::WorktreeFileDiff>("The diff: A's version before, B's after")
            }),
        )
        .api_route(
            "/api/worktrees/{name}",
            delete_with(worktree_remove, |op| {
                op.summary("Remove a worktree and its branch")
                    .json::<200, WorktreeView>("The removed worktree")
                    .error::<409>("It has work that would be lost (the message says what)")
            }),
        )
        .api_route(
            "/api/worktrees/{name}/reset",
            post_with(worktree_reset, |op| {
                op.summary("Back to its base")
                    .json::<200, shapes::Trashed>("Reset")
            }),
        )
        .api_route(
            "/api/worktrees/{name}/diff",
            get_with(worktree_diff, |op| {
                op.summary("One file of an attempt against a base")
                    .json::<200, mia_protocol::WorktreeFileDiff>(
                        "The diff: files and hunks, and git's text",
                    )
            }),
        )
        .api_route(
            "/api/worktrees/{name}/take",
            post_with(worktree_take, |op| {
                op.summary("Copy a file (or one hunk of it) from this attempt into another")
                    .json::<200, shapes::Trashed>("Taken")
                    .error::<409>("`kind: would_lose`: the target's own version would be replaced (retry with force)")
            }),
        )
        .api_route(
            "/api/worktrees/{name}/promote",
            post_with(worktree_promote, |op| {
                op.summary("Merge into the base branch, or keep the branch")
                    .json::<200, PromotedView>("Promoted")
                    .error::<409>("Merge conflict: nothing changed; or `kind: would_lose` over ignored files of the base checkout")
            }),
        )
}

/// The `{name}` of a worktree's routes.
#[derive(Deserialize, JsonSchema)]
struct WorktreePath {
    /// The worktree's name (or `main`).
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct WtDirQuery {
    /// The project folder.
    #[schemars(required)]
    directory: Option<String>,
    /// Remove even with work that would be lost (a copy goes to the trash).
    #[serde(default)]
    force: bool,
}

pub(crate) fn wt_dir(d: Option<&str>) -> Result<std::path::PathBuf, BadRequest> {
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

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "CreateWorktree")]
struct WtCreateBody {
    /// The project folder.
    directory: String,
    /// The worktree's name (default: a generated one).
    name: Option<String>,
    /// The commit or branch it starts from (default: HEAD).
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
    Path(WorktreePath { name }): Path<WorktreePath>,
    Query(q): Query<WtDirQuery>,
) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.worktree_remove(d, name, q.force).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "WorktreeProject")]
struct WtBody {
    /// The project folder.
    directory: String,
}

async fn worktree_reset(
    State(s): State<AppState>,
    Path(WorktreePath { name }): Path<WorktreePath>,
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

#[derive(Deserialize, JsonSchema)]
struct WtCompareQuery {
    /// The project folder.
    #[schemars(required)]
    directory: Option<String>,
    /// One attempt: a worktree name or `main`.
    a: String,
    /// The other attempt.
    b: String,
    /// Also run the project's check command in each.
    #[serde(default)]
    check: bool,
    /// List each changed file's hunks against the base (`files[].hunks`,
    /// the ids `take` with `hunk` accepts).
    #[serde(default)]
    hunks: bool,
}

async fn worktree_compare(State(s): State<AppState>, Query(q): Query<WtCompareQuery>) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => reply(
            s.runtime
                .worktree_compare(
                    d,
                    q.a,
                    q.b,
                    mia_core::worktrees::CompareOptions {
                        check: q.check,
                        hunks: q.hunks,
                    },
                )
                .await,
        ),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
struct WtDiffQuery {
    /// The project folder.
    #[schemars(required)]
    directory: Option<String>,
    /// What to compare against: a worktree name, `main`, or a commit.
    base: String,
    /// The file, relative to the worktree.
    path: String,
}

async fn worktree_diff(
    State(s): State<AppState>,
    Path(WorktreePath { name }): Path<WorktreePath>,
    Query(q): Query<WtDiffQuery>,
) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => match s.runtime.worktree_file_diff(d, name, q.base, q.path).await {
            Ok(diff) => Json(diff).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "TakeFile")]
struct WtTakeBody {
    /// The project folder.
    directory: String,
    /// The file, relative to the worktree.
    path: String,
    /// The attempt it goes into (a worktree name or `main`).
    into: String,
    /// Only this hunk of what the attempt changed in the file (an id from
    /// the comparison's `files[].hunks`).
    #[serde(default)]
    hunk: Option<String>,
    /// Take it even over the target's own version (a copy goes to the trash).
    #[serde(default)]
    force: bool,
}

#[derive(Deserialize, JsonSchema)]
struct WtBetweenQuery {
    /// The project folder.
    #[schemars(required)]
    directory: Option<String>,
    /// The attempt shown as "before" (a worktree name or `main`).
    a: String,
    /// The attempt shown as "after".
    b: String,
    /// The file, relative to the attempts.
    path: String,
}

async fn worktree_between(State(s): State<AppState>, Query(q): Query<WtBetweenQuery>) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.worktree_between(d, q.a, q.b, q.path).await),
        Err(r) => r.into_response(),
    }
}

async fn worktree_trash(State(s): State<AppState>, Query(q): Query<WtDirQuery>) -> Response {
    match wt_dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.worktree_trash(d).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "RestoreTrash")]
struct WtRestoreBody {
    /// The project folder.
    directory: String,
    /// Where the files go (default: where they were).
    #[serde(default)]
    into: Option<String>,
}

/// The `{id}` of a trash entry.
#[derive(Deserialize, JsonSchema)]
struct TrashPath {
    /// The trash entry's id.
    id: String,
}

async fn worktree_trash_restore(
    State(s): State<AppState>,
    Path(TrashPath { id }): Path<TrashPath>,
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
    Path(WorktreePath { name }): Path<WorktreePath>,
    Json(b): Json<WtTakeBody>,
) -> Response {
    match wt_dir(Some(&b.directory)) {
        Ok(d) => match s
            .runtime
            .worktree_take(d, name, b.path, b.into, b.hunk, b.force)
            .await
        {
            Ok(trash) => Json(json!({ "trash": trash })).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "PromoteWorktree")]
struct WtPromoteBody {
    /// The project folder.
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
    Path(WorktreePath { name }): Path<WorktreePath>,
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

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "TryNWays")]
struct WtTryBody {
    /// The project folder.
    directory: String,
    /// The prompt.
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
