//! mia-git: mia-code's layer over the user's own git repository (not the
//! snapshot store). Experiment worktrees (spec 075) — create from a chosen
//! base with `.worktreeinclude` files and start scripts, list with status,
//! remove with what would be lost, reset — and the comparison of attempts:
//! each one's working tree against their common base, the diff between
//! them, taking a file across, promoting the winner.
//!
//! It drives the git CLI rather than libgit2: `git worktree add`, submodule
//! initialisation and `merge-tree` are not (fully) in libgit2, and the
//! user's git is what the user's repository expects. Hooks are off unless
//! `worktree.runHooks` is set.

mod attempt_tree;
mod attempt_update;
mod compare;
mod error;
pub mod feed;
mod git;
pub mod hunks;
pub mod names;
mod safety;
pub mod ship;
mod watched;
mod worktree;

pub use compare::{
    Attempt, Between, Comparison, FileChange, FileSides, PromoteMode, Promoted, Stats,
};
pub use error::{GitError, Result};
pub use feed::{AttemptDir, AttemptRead, ChangeFeed, KnownChanges};
pub use hunks::{HunkEntry, Side as HunkSide};
pub use safety::{AtRisk, REGENERABLE_DIRS, RepoLock, TrashEntry, TrashOperation};
pub use watched::{MAX_WATCHED, WatchedAttempts};
pub use worktree::{
    Cancel, CreateOptions, Created, Meta, OnLine, Repo, ScriptConfinement, ScriptLine,
    ScriptResult, Settings, WorktreeInfo, WorktreeState, Worktrees, head_commit, main_root_of,
    run_script,
};
