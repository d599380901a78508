//! mia-snapshot: the undo engine. One hidden git object store per
//! repository, outside the work tree (`$MIA_CODE_HOME/snapshots/<key>/`,
//! shared by every worktree of the repository), captures the working tree
//! before every file-modifying step so any step can be diffed, exported as a
//! patch and undone.

mod cache;
mod capture;
mod config;
mod diff;
mod error;
mod gc;
mod journal;
mod model;
mod names;
mod pack;
mod render;
mod repo;
mod revert;
mod scan;
mod tree;
mod watch;

pub use config::{DEFAULT_EXCLUDED_DIRS, SnapshotConfig};
pub use diff::{
    CONTEXT_LINES, DiffLine, DiffStats, DiffStatus, FileDiff, Hunk, LineType, compute_hunks,
    contents_diff, hunk_header, proposed_diff, stats, to_patch, to_patch_with,
};
pub use error::{Result, SnapshotError};
pub use gc::{
    GcReport, RetainedSnapshot, RetentionPlan, dir_size, gc_in_background, plan_retention,
};
pub use journal::Concurrent;
pub use model::{
    CaptureContext, CaptureMode, ExcludeReason, ExcludedFile, ForeignChange, Snapshot, StepKind,
    StepRecord, reason_text,
};
pub use render::{RenderOptions, render_terminal, summary_line};
pub use repo::{
    LEGACY_SNAPSHOT_DIR, RepoLock, SnapshotRepo, StepLock, acquire_step_lock, default_store_root,
    project_store_key, validate_project_root, worktree_key,
};
pub use revert::{
    Conflict, Expectation, FileAction, PendingStep, PlanKind, PlannedFile, RevertOutcome,
    RevertPlan, undone_steps,
};
pub use watch::{OutsideChanges, ProjectWatcher, WatchOptions};
