//! Experiment worktrees and the comparison of attempts, as front ends see them.

use serde::{Deserialize, Serialize};

/// A session working in a worktree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreeSessionRef {
    pub id: String,
    pub title: String,
    pub status: String,
}

/// One mia-code worktree and its state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreeView {
    pub name: String,
    pub path: String,
    pub branch: String,
    /// The commit it started from.
    pub base: String,
    /// The branch that commit was the tip of (what `promote` merges into).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ref: Option<String>,
    pub head: String,
    pub created_at: i64,
    pub size_bytes: u64,
    /// Uncommitted changes (paths, at most 200).
    pub dirty: Vec<String>,
    /// Commits its base branch does not have.
    pub ahead: u32,
    /// Nothing would be lost by removing it.
    pub merged: bool,
    /// What removing it would lose, said for a person (uncommitted,
    /// untracked and ignored files, commits only its branch holds,
    /// submodule commits); absent when nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub would_lose: Option<String>,
    pub sessions: Vec<WorktreeSessionRef>,
    /// Whether it is as mia-code made it.
    #[serde(default)]
    pub state: WorktreeState,
    /// The branch mia-code made it on (the one its commands act on).
    #[serde(default)]
    pub recorded_branch: String,
    /// What removing it put in the trash first (`remove --force`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trash: Option<TrashView>,
}

/// Whether a worktree is as mia-code made it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum WorktreeState {
    #[default]
    Ok,
    /// Another branch is checked out there now.
    BranchChanged,
    /// Its directory was moved or deleted.
    Missing,
}

/// The worktree operation that put an entry in the trash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TrashOperation {
    Remove,
    Reset,
    Take,
    Promote,
    /// `worktree.autoCleanup` after a promote.
    AutoCleanup,
}

impl std::fmt::Display for TrashOperation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Remove => "remove",
            Self::Reset => "reset",
            Self::Take => "take",
            Self::Promote => "promote",
            Self::AutoCleanup => "auto-cleanup",
        })
    }
}

/// What a forced worktree operation (or a reset) kept before it dropped it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrashView {
    pub id: String,
    pub worktree: String,
    pub operation: TrashOperation,
    pub created_at: i64,
    /// Where the files were.
    pub root: String,
    pub files: Vec<String>,
    /// Commits kept (a bundle), by the ref that held them.
    pub refs: Vec<String>,
    /// Submodule commits kept: `path@commit`.
    pub submodule_commits: Vec<String>,
}

/// How a start or check script ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScriptView {
    pub command: String,
    /// `null`: killed (cancelled or timed out).
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub duration_ms: u64,
    /// The last 64 KiB of its output.
    pub output: String,
}

/// What `worktree create` made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreeCreated {
    pub name: String,
    pub path: String,
    pub branch: String,
    pub base: String,
    pub head: String,
    /// Ignored files copied in (`.worktreeinclude`).
    pub included: Vec<String>,
    pub submodules: bool,
    pub scripts: Vec<ScriptView>,
}

/// One changed file of an attempt against the base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttemptFile {
    pub path: String,
    pub status: AttemptFileStatus,
    pub additions: u32,
    pub deletions: u32,
    pub binary: bool,
    /// Its hunks against the base (ids for `worktree take --hunk`); listed
    /// when asked for (`worktree compare --json`, `?hunks=true`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hunks: Vec<crate::HunkView>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttemptStats {
    pub files: u32,
    pub additions: u32,
    pub deletions: u32,
}

/// What the sessions working in an attempt used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttemptUsage {
    pub sessions: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Dollars; `null` when a model's price is unknown.
    pub cost: Option<f64>,
    /// From the first message to the last, summed over its sessions.
    pub duration_ms: u64,
    /// Model steps (assistant messages).
    pub steps: u32,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttemptView {
    /// A worktree name, or `main`.
    pub name: String,
    pub path: String,
    pub files: Vec<AttemptFile>,
    pub stats: AttemptStats,
    pub usage: AttemptUsage,
    /// The last run of `worktree.checkCommand` there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<ScriptView>,
}

/// How a path compares between the two attempts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BetweenView {
    pub path: String,
    pub status: BetweenStatus,
}

/// How a file of an attempt differs from the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttemptFileStatus {
    Added,
    Modified,
    Deleted,
    TypeChanged,
}

impl AttemptFileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
            Self::TypeChanged => "type_changed",
        }
    }
}

/// How a path compares between two attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BetweenStatus {
    /// Both changed it the same way.
    Same,
    OnlyA,
    OnlyB,
    /// Both changed it, differently.
    Differ,
}

impl BetweenStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Same => "same",
            Self::OnlyA => "only_a",
            Self::OnlyB => "only_b",
            Self::Differ => "differ",
        }
    }
}

/// `worktree compare A B`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ComparisonView {
    pub base: String,
    pub a: AttemptView,
    pub b: AttemptView,
    pub between: Vec<BetweenView>,
}

/// What `promote` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PromotedView {
    pub name: String,
    pub branch: String,
    pub head: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_into: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub fast_forward: bool,
    pub removed: bool,
    /// Other worktrees the user may now remove.
    pub others: Vec<String>,
    /// The worktree's uncommitted changes were committed on its branch as this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed: Option<String>,
    /// Why auto-cleanup kept the worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
    /// What went to the trash first (`--force`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trash: Option<TrashView>,
}

/// One file of an attempt against a base (`GET /api/worktrees/{name}/diff`):
/// the structured diff front ends render, and git's text for `git apply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreeFileDiff {
    /// `git diff BASE ATTEMPT -- PATH`, as git prints it.
    pub diff: String,
    /// The same change as files and hunks (empty when the file is on
    /// neither side).
    pub files: Vec<crate::FileDiff>,
}
