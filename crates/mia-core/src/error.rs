#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error(transparent)]
    Store(#[from] mia_store::StoreError),
    #[error(transparent)]
    Config(#[from] mia_config::ConfigError),
    /// The snapshot store failed or refused (a missing snapshot, a locked store).
    #[error(transparent)]
    Snapshot(#[from] mia_snapshot::SnapshotError),
    /// The input or the configuration is wrong; the message says what and
    /// how to fix it (a model reference, a key, a setting, an answer).
    #[error("{0}")]
    Invalid(String),
    /// A rule refuses it (a setting turned off, a file outside the project,
    /// a policy broader than its creator's); the message names the rule.
    #[error("{0}")]
    Refused(String),
    /// Something outside mia-code failed (a program, a model, the file
    /// system, the keychain); the message says which and why. Nothing was
    /// changed unless it says so.
    #[error("{0}")]
    Failed(String),
    /// The user stopped it; nothing was changed.
    #[error("{0}")]
    Stopped(String),
    #[error("unknown agent `{name}`; available: {available}")]
    UnknownAgent { name: String, available: String },
    #[error(
        "no model is configured; pass --model provider/model (e.g. anthropic/claude-sonnet-4-5) or set `model` in your config"
    )]
    NoModel,
    #[error("`{0}` is not a model reference; use provider/model, e.g. openai/gpt-5")]
    BadModel(String),
    /// Another owner holds the session (a turn, an undo, a delete), in this
    /// process or another one.
    #[error("session {session} is running {holder}; wait for it to finish or stop it there")]
    Busy { session: String, holder: String },
    #[error("no pending permission request {0} in this session")]
    NoSuchRequest(String),
    /// Something named does not exist (a worktree); the message says how to list them.
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with the state of things (a worktree with work
    /// that would be lost, a merge conflict, a name taken); nothing changed.
    #[error("{0}")]
    Conflict(String),
    /// A worktree operation was refused because it would lose work (the
    /// message names what); nothing changed, and `force` would do it after
    /// keeping a copy in the trash.
    #[error("{0}")]
    WouldLose(String),
    /// A server mia-code talks to (the share server) failed or refused;
    /// the message says which and why.
    #[error("{0}")]
    Remote(String),
    /// A store request failed unexpectedly (it panicked, or the store
    /// thread is gone); the store opened its database again.
    #[error("the session store failed: {0}")]
    StoreFailed(String),
    #[error("internal error: {0}")]
    Internal(String),
}

/// What kind of failure a [`CoreError`] is, for front ends to map to their
/// own codes (HTTP status, exit code) without knowing the layers below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// No such session, message or request.
    NotFound,
    /// The input or the configuration is wrong; the message says how.
    BadInput,
    /// Another owner holds the session.
    Busy,
    /// It conflicts with the current state; nothing was changed.
    Conflict,
    /// It would lose work (a conflict that `force` may override, keeping a
    /// copy); nothing was changed.
    WouldLose,
    /// The store was locked by another process for too long; try again.
    Unavailable,
    /// Anything else.
    Internal,
}

impl CoreError {
    pub fn kind(&self) -> ErrorKind {
        use mia_store::StoreError as S;
        match self {
            Self::Store(S::SessionNotFound(_) | S::MessageNotFound { .. })
            | Self::NoSuchRequest(_)
            | Self::NotFound(_) => ErrorKind::NotFound,
            Self::Conflict(_) => ErrorKind::Conflict,
            Self::WouldLose(_) => ErrorKind::WouldLose,
            Self::Busy { .. } | Self::Store(S::SessionBusy { .. }) => ErrorKind::Busy,
            Self::UnknownAgent { .. }
            | Self::NoModel
            | Self::BadModel(_)
            | Self::Invalid(_)
            | Self::Refused(_)
            | Self::Failed(_)
            | Self::Stopped(_)
            | Self::Config(_)
            | Self::Store(
                S::InvalidInput(_) | S::InvalidForkPoint { .. } | S::ForkDepthExceeded { .. },
            ) => ErrorKind::BadInput,
            Self::Store(S::Concurrency(_)) | Self::Remote(_) => ErrorKind::Unavailable,
            _ => ErrorKind::Internal,
        }
    }
}
