//! Review and ship routes: a session's review comments and scopes
//! (`/api/sessions/{id}/review...`), hunks of a checkout (`/api/hunks...`),
//! commit, push and pull requests (`/api/git...`); thin over
//! `mia_core::Runtime::{review_*, hunk_*, commit, push, pr_*}`.

use aide::axum::ApiRouter;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_protocol::{ForgeKind, NewReviewComment, ReviewScope};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::openapi::{Answers as _, shapes};
use crate::{AppState, SessionPath, core_error, parse_id, reply};

/// The review and ship routes (the caller adds authentication).
pub(crate) fn routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{delete_with, get_with, post_with};
    use mia_protocol::{ReviewComment, ReviewDiff, ReviewList};
    ApiRouter::new()
        .api_route(
            "/api/sessions/{id}/review",
            get_with(review_list, |op| {
                op.summary("The session's review comments (outdated: their lines changed since)")
                    .json::<200, ReviewList>("The comments")
            })
            .post_with(review_add, |op| {
                op.summary("Comment on lines of a file, for the agent")
                    .json::<201, ReviewComment>("Added")
                    .error::<400>("Not a file of the session's folder, or lines not in it")
            })
            .delete_with(review_clear, |op| {
                op.summary("Delete every review comment of the session")
                    .json::<200, shapes::Cleared>("How many were deleted")
            }),
        )
        .api_route(
            "/api/sessions/{id}/review/send",
            post_with(review_send, |op| {
                op.summary("Send the comments to the agent as one user message and run the turn")
                    .optional_body()
                    .json::<202, shapes::Accepted>("Turn started; follow /api/events")
                    .error::<400>("No comments to send")
                    .error::<409>("A turn is already running (the comments are kept)")
            }),
        )
        .api_route(
            "/api/sessions/{id}/review/diff",
            get_with(review_diff, |op| {
                op.summary("The review pane's changes: uncommitted, the branch against its base, or the last turn")
                    .json::<200, ReviewDiff>("The files")
            }),
        )
        .api_route(
            "/api/sessions/{id}/review/{comment}",
            delete_with(review_remove, |op| {
                op.summary("Delete one review comment")
                    .json::<200, ReviewList>("The comments left")
                    .error::<404>("No such comment")
            }),
        )
        .with_path_items(|item| item.tag("review"))
        .merge(hunk_routes())
        .merge(git_routes())
}

fn hunk_routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{get_with, post_with};
    use mia_protocol::{HunkList, HunkReverted, HunkView};
    ApiRouter::new()
        .api_route(
            "/api/hunks",
            get_with(hunk_list, |op| {
                op.summary("The checkout's hunks: the work tree against the index, or (staged) the index against HEAD")
                    .json::<200, HunkList>("The hunks")
            }),
        )
        .api_route(
            "/api/hunks/{hunk}/stage",
            post_with(hunk_stage, |op| {
                op.summary("Stage one hunk, as `git add -p` does")
                    .optional_body()
                    .json::<200, HunkView>("Staged")
                    .error::<409>("The id is not (or no longer) a hunk of the work tree; nothing changed")
            }),
        )
        .api_route(
            "/api/hunks/{hunk}/unstage",
            post_with(hunk_unstage, |op| {
                op.summary("Unstage one staged hunk")
                    .optional_body()
                    .json::<200, HunkView>("Unstaged")
                    .error::<409>("The id is not (or no longer) a staged hunk; nothing changed")
            }),
        )
        .api_route(
            "/api/hunks/{hunk}/revert",
            post_with(hunk_revert, |op| {
                op.summary("Discard one hunk from the work tree (snapshotted first; an undoable step of `session` when named)")
                    .optional_body()
                    .json::<200, HunkReverted>("Discarded")
                    .error::<409>("The id is not (or no longer) a hunk of the work tree; nothing changed")
            }),
        )
        .with_path_items(|item| item.tag("review"))
}

fn git_routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{get_with, post_with};
    use mia_protocol::{BranchStatus, CommitResult, Draft, PullRequestView, PushResult};
    ApiRouter::new()
        .api_route(
            "/api/git/status",
            get_with(git_status, |op| {
                op.summary("Where the checkout's branch stands: upstream, ahead/behind, staged and unstaged files, its pull request")
                    .json::<200, BranchStatus>("The branch")
            }),
        )
        .api_route(
            "/api/git/commit",
            post_with(commit, |op| {
                op.summary("Commit what is staged (the repository's hooks run)")
                    .json::<201, CommitResult>("Committed")
                    .error::<400>("Nothing staged, an empty message, or a hook refused")
            }),
        )
        .api_route(
            "/api/git/commit/draft",
            post_with(commit_draft, |op| {
                op.summary("A commit message for what is staged, drafted by the small model; nothing is written")
                    .json::<200, Draft>("The draft")
            }),
        )
        .api_route(
            "/api/git/push",
            post_with(push, |op| {
                op.summary("Push the branch with the person's git (to its upstream, or to `remote`, which it then tracks)")
                    .json::<200, PushResult>("Pushed")
                    .error::<400>("No upstream and no remote named, or a detached HEAD")
                    .error::<503>("The remote refused or could not be reached (the message says why)")
            }),
        )
        .api_route(
            "/api/git/pr",
            get_with(pr_status, |op| {
                op.summary("The branch's pull request: state, review decision, checks")
                    .json::<200, PullRequestView>("The pull request")
                    .error::<404>("The branch has none")
            })
            .post_with(pr_create, |op| {
                op.summary("Open a pull request (GitHub) or merge request (GitLab) for the pushed branch")
                    .json::<201, PullRequestView>("Opened")
                    .error::<400>("Not pushed yet, no token, or the forge is unknown (the message says what to do)")
                    .error::<409>("One already exists for the branch (its link is in the message)")
                    .error::<503>("The forge refused or could not be reached")
            }),
        )
        .api_route(
            "/api/git/pr/draft",
            post_with(pr_draft, |op| {
                op.summary("A pull request title and body drafted by the small model from the branch's commits")
                    .json::<200, Draft>("The draft")
            }),
        )
        .with_path_items(|item| item.tag("git"))
}

use crate::worktrees::wt_dir as dir;

async fn review_list(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.review_list(id).await),
        Err(r) => r.into_response(),
    }
}

async fn review_add(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Json(b): Json<NewReviewComment>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => match s.runtime.review_add(id, b).await {
            Ok(c) => (StatusCode::CREATED, Json(c)).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

async fn review_clear(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => match s.runtime.review_clear(id).await {
            Ok(n) => Json(json!({ "cleared": n })).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

/// The `{id}` and `{comment}` of one review comment.
#[derive(Deserialize, JsonSchema)]
struct CommentPath {
    /// The session's id.
    id: String,
    /// The comment's id.
    comment: String,
}

async fn review_remove(
    State(s): State<AppState>,
    Path(CommentPath { id, comment }): Path<CommentPath>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.review_remove(id, &comment).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema, Default)]
#[schemars(rename = "ReviewSend")]
struct SendBody {
    /// The agent to answer (default: the session's).
    agent: Option<String>,
    /// The model, as provider/model (default: the session's).
    model: Option<String>,
}

async fn review_send(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    body: Option<Json<SendBody>>,
) -> Response {
    let b = body.map(|Json(b)| b).unwrap_or_default();
    match parse_id(&id) {
        Ok(id) => match s.runtime.review_send(id, b.agent, b.model).await {
            Ok(_) => (StatusCode::ACCEPTED, Json(json!({ "ok": true }))).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
struct ScopeQuery {
    /// `uncommitted`, `branch` or `last_turn`.
    scope: ReviewScope,
}

async fn review_diff(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    Query(q): Query<ScopeQuery>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.review_diff(id, q.scope).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
struct HunkQuery {
    /// The project or worktree folder.
    #[schemars(required)]
    directory: Option<String>,
    /// The index's hunks against HEAD instead of the work tree's.
    #[serde(default)]
    staged: bool,
}

async fn hunk_list(State(s): State<AppState>, Query(q): Query<HunkQuery>) -> Response {
    match dir(q.directory.as_deref()) {
        Ok(d) => reply(
            s.runtime
                .hunk_list(&d, q.staged)
                .await
                .map(|hunks| mia_protocol::HunkList { hunks }),
        ),
        Err(r) => r.into_response(),
    }
}

/// The `{hunk}` of a hunk route.
#[derive(Deserialize, JsonSchema)]
struct HunkPath {
    /// The hunk's id (from `GET /api/hunks`).
    hunk: String,
}

#[derive(Deserialize, JsonSchema)]
struct DirQuery {
    /// The project or worktree folder.
    #[schemars(required)]
    directory: Option<String>,
}

async fn hunk_stage(
    State(s): State<AppState>,
    Path(HunkPath { hunk }): Path<HunkPath>,
    Query(q): Query<DirQuery>,
) -> Response {
    match dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.hunk_stage(&d, &hunk).await),
        Err(r) => r.into_response(),
    }
}

async fn hunk_unstage(
    State(s): State<AppState>,
    Path(HunkPath { hunk }): Path<HunkPath>,
    Query(q): Query<DirQuery>,
) -> Response {
    match dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.hunk_unstage(&d, &hunk).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema, Default)]
#[schemars(rename = "HunkRevert")]
struct RevertBody {
    /// Record the discard as a step of this session (undo brings it back).
    session: Option<String>,
}

async fn hunk_revert(
    State(s): State<AppState>,
    Path(HunkPath { hunk }): Path<HunkPath>,
    Query(q): Query<DirQuery>,
    body: Option<Json<RevertBody>>,
) -> Response {
    let b = body.map(|Json(b)| b).unwrap_or_default();
    let session = match b.session.as_deref().map(parse_id).transpose() {
        Ok(sid) => sid,
        Err(r) => return r.into_response(),
    };
    match dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.hunk_revert(&d, &hunk, session).await),
        Err(r) => r.into_response(),
    }
}

async fn git_status(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    match dir(q.directory.as_deref()) {
        Ok(d) => reply(s.runtime.git_status(&d).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "Commit")]
struct CommitBody {
    /// The project or worktree folder.
    directory: String,
    message: String,
}

async fn commit(State(s): State<AppState>, Json(b): Json<CommitBody>) -> Response {
    match dir(Some(&b.directory)) {
        Ok(d) => match s.runtime.commit(&d, &b.message, false).await {
            Ok(c) => (StatusCode::CREATED, Json(c)).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "DraftRequest")]
struct DraftBody {
    /// The project or worktree folder.
    directory: String,
    /// The session whose work it is (for a pull request's draft).
    #[serde(default)]
    session: Option<String>,
    /// The branch the pull request goes into (default `main`).
    #[serde(default)]
    base: Option<String>,
}

async fn commit_draft(State(s): State<AppState>, Json(b): Json<DraftBody>) -> Response {
    match dir(Some(&b.directory)) {
        Ok(d) => reply(s.runtime.draft_commit_message(&d).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "Push")]
struct PushBody {
    /// The project or worktree folder.
    directory: String,
    /// Push there (and track it when the branch has no upstream).
    #[serde(default)]
    remote: Option<String>,
}

async fn push(State(s): State<AppState>, Json(b): Json<PushBody>) -> Response {
    match dir(Some(&b.directory)) {
        Ok(d) => reply(s.runtime.push(&d, b.remote, false, |_| {}).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "PullRequestCreate")]
struct PrBody {
    /// The project or worktree folder.
    directory: String,
    #[serde(default)]
    remote: Option<String>,
    /// The branch to merge into (default: the repository's default branch).
    #[serde(default)]
    base: Option<String>,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
    /// Draft the title and body with the small model.
    #[serde(default)]
    generate: bool,
    #[serde(default)]
    provider: Option<ForgeKind>,
    /// The session whose work it is.
    #[serde(default)]
    session: Option<String>,
}

async fn pr_create(State(s): State<AppState>, Json(b): Json<PrBody>) -> Response {
    let session = match b.session.as_deref().map(parse_id).transpose() {
        Ok(sid) => sid,
        Err(r) => return r.into_response(),
    };
    let req = mia_core::ship::PrRequest {
        remote: b.remote,
        base: b.base,
        draft: b.draft,
        title: b.title.filter(|t| !t.trim().is_empty()),
        body: b.body,
        generate: b.generate,
        provider: b.provider,
        session,
    };
    match dir(Some(&b.directory)) {
        Ok(d) => match s.runtime.pr_create(&d, req).await {
            Ok(pr) => (StatusCode::CREATED, Json(pr)).into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
struct PrQuery {
    /// The project or worktree folder.
    #[schemars(required)]
    directory: Option<String>,
    remote: Option<String>,
    provider: Option<ForgeKind>,
}

async fn pr_status(State(s): State<AppState>, Query(q): Query<PrQuery>) -> Response {
    match dir(q.directory.as_deref()) {
        Ok(d) => match s.runtime.pr_status(&d, q.remote, q.provider).await {
            Ok(Some(pr)) => Json(pr).into_response(),
            Ok(None) => crate::error(
                StatusCode::NOT_FOUND,
                "this branch has no pull request yet (create one with POST /api/git/pr)",
            ),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

async fn pr_draft(State(s): State<AppState>, Json(b): Json<DraftBody>) -> Response {
    let session = match b.session.as_deref().map(parse_id).transpose() {
        Ok(sid) => sid,
        Err(r) => return r.into_response(),
    };
    match dir(Some(&b.directory)) {
        Ok(d) => reply(s.runtime.pr_draft(&d, session, b.base).await),
        Err(r) => r.into_response(),
    }
}
