use std::path::PathBuf;

/// Everything that can go wrong in the snapshot engine. Messages say what
/// happened and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(
        "refusing to snapshot {path}: it is {what}; open mia-code in a project directory instead"
    )]
    UnsafeProjectRoot { path: PathBuf, what: &'static str },

    #[error("project directory {path} does not exist or is not a directory: {source}")]
    ProjectNotFound {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "path {path} is outside the project {project}; only files inside the project can be snapshotted"
    )]
    PathOutsideProject { path: PathBuf, project: PathBuf },

    #[error(
        "snapshot {hash} was not found in {repo}; it may have been pruned by retention (list snapshots with `mia-code snapshots --session ID`)"
    )]
    SnapshotNotFound { hash: String, repo: PathBuf },

    #[error(
        "the snapshot repository {repo} is locked by another mia-code process (pid {holder}); wait for it to finish or retry"
    )]
    Locked { repo: PathBuf, holder: String },

    #[error(
        "no place for snapshots: neither MIA_CODE_HOME nor HOME is set; set MIA_CODE_HOME to a directory mia-code may write"
    )]
    NoStoreRoot,

    #[error(
        "another step is running a shell command in {project} ({holder}); waited {waited_ms} ms for it to finish. Its changes and this step's could not be told apart, so this step did not run; try again when it is done"
    )]
    StepBusy {
        project: PathBuf,
        holder: String,
        waited_ms: u64,
    },

    #[error(
        "capture exceeded its time budget of {budget_ms} ms after {elapsed_ms} ms ({stage}); the step proceeds without undo, progress was kept so the next capture is faster"
    )]
    TimeBudgetExceeded {
        budget_ms: u64,
        elapsed_ms: u64,
        stage: &'static str,
    },

    #[error("nothing to {what}: {detail}")]
    NothingToRevert { what: &'static str, detail: String },

    #[error("message {message} has no recorded file changes in this session")]
    MessageNotFound { message: String },

    #[error(
        "after restoring, {path} does not match the snapshot (expected {expected}, found {found}); the pre-revert snapshot {pre_revert} still holds the previous content"
    )]
    RestoreVerificationFailed {
        path: String,
        expected: String,
        found: String,
        pre_revert: String,
    },

    #[error(
        "restoring {path} failed: {reason}; {}the pre-revert snapshot {pre_revert} holds the state before the attempt (`mia-code snapshot restore {pre_revert}`)",
        if *rolled_back { "the files changed before it were put back; " } else { "putting back the files changed before it failed too; " }
    )]
    RestoreFailed {
        path: String,
        reason: String,
        rolled_back: bool,
        pre_revert: String,
    },

    #[error(
        "{path} could not be replaced or deleted: Windows refuses while another program has it open, or while it is read-only (waited {waited_ms} ms for it to be let go); close it there (or the program), clear its read-only attribute if set, and try again"
    )]
    InUse { path: PathBuf, waited_ms: u64 },

    #[error("snapshot repository error in {repo}: {source}")]
    Git {
        repo: PathBuf,
        #[source]
        source: git2::Error,
    },

    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("`git {args}` failed in {repo}: {stderr}")]
    GitCommand {
        args: String,
        repo: PathBuf,
        stderr: String,
    },
}

impl SnapshotError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }

    /// True when the error means "no snapshot for this step" rather than a
    /// broken repository: the runtime records the step's snapshot as
    /// unavailable with [`SnapshotError::to_string`] as the reason.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::TimeBudgetExceeded { .. } | Self::Locked { .. })
    }
}

pub type Result<T, E = SnapshotError> = std::result::Result<T, E>;
