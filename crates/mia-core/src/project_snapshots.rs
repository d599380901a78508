//! A project's snapshot store used directly, by path (`mia-code snapshot
//! capture|diff|restore`), with mia-code's store defaults; and the diff
//! renderings front ends print.

use std::path::{Path, PathBuf};

use mia_protocol::{FileDiff, SessionId};
use mia_snapshot::{CaptureContext, RenderOptions, SnapshotRepo};
pub use mia_snapshot::{
    DEFAULT_EXCLUDED_DIRS, ExcludedFile, RevertOutcome, Snapshot, StepKind, StepRecord,
};

use crate::{CoreError, Runtime};

/// Files two snapshots (or a snapshot and the working tree) differ in.
pub struct SnapshotDiff {
    pub files: Vec<FileDiff>,
    /// A patch `git apply` takes (binary files as `GIT binary patch`).
    pub patch: String,
}

impl Runtime {
    fn project_repo(&self, project: &Path) -> Result<SnapshotRepo, CoreError> {
        Ok(SnapshotRepo::open(
            project,
            crate::snapshots::store_config(&self.options().paths),
        )?)
    }

    /// Snapshot `project` now (only `paths` on top of the latest snapshot
    /// when some are given), recorded in `session`'s index when given.
    pub async fn capture_project(
        &self,
        project: &Path,
        session: Option<SessionId>,
        paths: &[PathBuf],
    ) -> Result<Snapshot, CoreError> {
        let mut repo = self.project_repo(project)?;
        let ctx = CaptureContext {
            session_id: session.map(|s| s.to_string()),
            ..CaptureContext::default()
        };
        let snap = repo.capture_unbounded(&ctx, (!paths.is_empty()).then_some(paths))?;
        if let Some(s) = session {
            self.index_capture(s, &snap).await?;
        }
        Ok(snap)
    }

    /// Snapshot `a` against `b`, or against the working tree.
    pub fn diff_snapshots(
        &self,
        project: &Path,
        a: &str,
        b: Option<&str>,
    ) -> Result<SnapshotDiff, CoreError> {
        let mut repo = self.project_repo(project)?;
        let files = match b {
            Some(b) => repo.diff_full(a, b)?,
            None => repo.diff_worktree(a, None)?,
        };
        let patch = repo.patch(&files);
        Ok(SnapshotDiff { files, patch })
    }

    /// Restore files from snapshot `hash` (every differing file when
    /// `paths` is empty). Files changed outside mia-code stop it unless
    /// `force` (a backup is kept).
    pub fn restore_snapshot(
        &self,
        project: &Path,
        hash: &str,
        paths: &[PathBuf],
        force: bool,
    ) -> Result<RevertOutcome, CoreError> {
        let mut repo = self.project_repo(project)?;
        Ok(repo.restore(hash, (!paths.is_empty()).then_some(paths), force)?)
    }
}

/// A diff for a terminal (colours and syntax highlighting when `color`).
pub fn render_terminal(diffs: &[FileDiff], color: bool) -> String {
    mia_snapshot::render_terminal(
        diffs,
        RenderOptions {
            color,
            highlight: color,
        },
    )
}

/// `3 files changed, 45 insertions(+), 12 deletions(-)`.
pub fn diff_summary(diffs: &[FileDiff]) -> String {
    mia_snapshot::summary_line(&mia_snapshot::stats(diffs))
}
