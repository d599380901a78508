//! mia-snapshot: the undo engine. A hidden git repository per project
//! (`<project>/.mia-code/snapshots/`) captures the working tree before every
//! file-modifying step so any step can be diffed, exported as a patch and
//! undone. See the crate README for the design.

mod cache;
mod capture;
mod config;
mod diff;
mod error;
mod gc;
mod model;
mod pack;
mod render;
mod repo;
mod revert;
mod scan;
mod tree;
mod watch;

pub use config::{BINARY_EXTENSIONS, DEFAULT_EXCLUDED_DIRS, SnapshotConfig};
pub use diff::{
    CONTEXT_LINES, DiffLine, DiffStats, DiffStatus, FileDiff, Hunk, LineType, compute_hunks,
    hunk_header, stats, to_patch,
};
pub use error::{Result, SnapshotError};
pub use gc::{
    GcReport, RetainedSnapshot, RetentionPlan, dir_size, gc_in_background, plan_retention,
};
pub use model::{
    CaptureContext, CaptureMode, ExcludeReason, ExcludedFile, Snapshot, StepKind, StepRecord,
};
pub use render::{RenderOptions, render_terminal, summary_line};
pub use repo::{RepoLock, SNAPSHOT_DIR, SnapshotRepo, validate_project_root};
pub use revert::{
    Conflict, Expectation, FileAction, PendingStep, PlanKind, PlannedFile, RevertOutcome,
    RevertPlan, undone_steps,
};
pub use watch::{OutsideChanges, ProjectWatcher};
