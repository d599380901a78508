use std::path::PathBuf;

/// What went wrong, said so that the user knows what to do.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0} is not inside a git repository: worktrees need one (`git init`, then commit)")]
    NotARepository(PathBuf),
    #[error("git {args} failed ({code}): {stderr}")]
    Git {
        args: String,
        code: String,
        stderr: String,
    },
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Conflict(String),
    #[error("no mia-code worktree named {0:?}; `mia-code worktree list` shows them")]
    NotFound(String),
    #[error("worktree name {name:?} is not valid: {why}")]
    InvalidName { name: String, why: String },
    #[error("{reference:?} is not a commit in this repository: {why}")]
    BadRef { reference: String, why: String },
    #[error("{0}")]
    WouldLose(String),
    #[error("merging {branch} into {base} conflicts in {}: {base} was not moved{}; resolve it in the worktree (merge {base} there) or keep the branch for a pull request", files.join(", "), committed.as_ref().map(|c| format!(", but the worktree's uncommitted changes were committed on {branch} as {c}")).unwrap_or_default())]
    MergeConflict {
        branch: String,
        base: String,
        files: Vec<String>,
        /// The worktree's uncommitted changes were committed on its branch first.
        committed: Option<String>,
    },
    #[error("{0}")]
    Invalid(String),
    /// A hunk id that is not (or no longer) among the current hunks.
    #[error("hunk {id} {why}; nothing was changed (`mia-code hunk list` shows the current hunks)")]
    HunkGone { id: String, why: String },
    #[error("git: {0}")]
    Lib(#[from] git2::Error),
    /// A remote refused or could not be reached (a push).
    #[error("{0}")]
    Remote(String),
}

impl GitError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, GitError>;
