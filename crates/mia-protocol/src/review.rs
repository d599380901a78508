//! Review and ship: comments on diff lines for the agent, hunks of the
//! user's repository, commits, pushes and pull requests.

use serde::{Deserialize, Serialize};

/// One hunk of a file (`mia-code hunk list --json`, `GET /api/hunks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HunkView {
    /// Stable: from the file and the hunk's content (not its line numbers,
    /// so staging one hunk does not change the others' ids).
    pub id: String,
    pub file: String,
    /// The path a renamed file had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_file: Option<String>,
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    pub staged: bool,
    /// The hunk's lines as a unified diff prints them: `+`, `-` or a space,
    /// then the line (`\ No newline at end of file` where git prints it).
    pub lines: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// Staged, discarded or taken as a whole: a binary file, a mode
    /// change, a rename, a new or deleted file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole_file: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HunkList {
    pub hunks: Vec<HunkView>,
}

/// What discarding a hunk did (`hunk revert`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HunkReverted {
    pub hunk: HunkView,
    /// The snapshot taken just before (the file as it was).
    pub snapshot: String,
    /// The session the discard was recorded in (undo brings it back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<crate::SessionId>,
    /// Without a session: the command that brings the hunk back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_command: Option<String>,
}

/// One review comment on lines of a file, kept for the session until sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewComment {
    pub id: String,
    /// Relative to the session's directory.
    pub file: String,
    /// 1-based, in the file as it is in the work tree.
    pub line: u32,
    /// The last line of the range (`line` for a single line).
    pub end_line: u32,
    pub text: String,
    /// The lines it was written on have changed since (the comment is
    /// kept, with the lines as they were).
    pub outdated: bool,
    /// The lines as they were when the comment was written.
    #[serde(default)]
    pub quote: Vec<String>,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewList {
    pub comments: Vec<ReviewComment>,
}

/// A new review comment (`POST /api/sessions/{id}/review`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NewReviewComment {
    pub file: String,
    pub line: u32,
    #[serde(default)]
    pub end_line: Option<u32>,
    pub text: String,
}

/// What the review pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReviewScope {
    /// The work tree against `HEAD` (staged and unstaged).
    Uncommitted,
    /// The work tree against the branch's base (where it left its base
    /// branch).
    Branch,
    /// What the session's last turn changed.
    LastTurn,
}

/// The changes of a review scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewDiff {
    pub scope: ReviewScope,
    /// What the changes are against (a commit, or a snapshot for the last
    /// turn); empty when there is nothing to compare with.
    pub base: String,
    pub files: Vec<crate::FileDiff>,
}

/// A commit made (`mia-code commit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommitResult {
    pub commit: String,
    pub branch: String,
    /// Its first line.
    pub summary: String,
    /// What `git commit` printed (hooks included).
    pub output: String,
}

/// A drafted message (commit message, or pull request title and body).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Draft {
    pub title: String,
    #[serde(default)]
    pub body: String,
}

/// A push made (`mia-code push`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PushResult {
    pub remote: String,
    pub branch: String,
    /// The branch had no upstream and now tracks `remote/branch`.
    pub upstream_set: bool,
    /// What git printed.
    pub output: String,
}

/// Where pull requests go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForgeKind {
    Github,
    Gitlab,
}

impl ForgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Github => "github",
            Self::Gitlab => "gitlab",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrState {
    Open,
    Closed,
    Merged,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    Approved,
    ChangesRequested,
    /// Reviews are required and none decided yet.
    ReviewRequired,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChecksState {
    /// No checks ran.
    None,
    Pending,
    Success,
    Failure,
}

/// The checks of a pull request's head commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChecksView {
    pub state: ChecksState,
    pub total: u32,
    pub passed: u32,
    pub failed: u32,
    pub pending: u32,
}

/// A pull request (GitHub) or merge request (GitLab).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PullRequestView {
    pub provider: ForgeKind,
    pub number: u64,
    pub url: String,
    pub state: PrState,
    pub title: String,
    pub draft: bool,
    pub head: String,
    pub base: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_decision: Option<ReviewDecision>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<ChecksView>,
}

/// Where the checkout's branch stands (`GET /api/git/status`): what the
/// commit, push and pull request buttons need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BranchStatus {
    /// `None`: a detached `HEAD`.
    pub branch: Option<String>,
    /// `remote/branch` it tracks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// Commits it has that its upstream lacks, and the reverse.
    pub ahead: u32,
    pub behind: u32,
    /// Files with staged changes, and with unstaged ones (untracked included).
    pub staged: u32,
    pub unstaged: u32,
    pub remotes: Vec<String>,
    /// The pull request recorded for the branch (`pr create`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<PullRequestLink>,
}

/// A pull request as recorded for a branch (no network needed to show it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PullRequestLink {
    pub provider: ForgeKind,
    pub number: u64,
    pub url: String,
}
