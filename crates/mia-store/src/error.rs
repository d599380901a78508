use std::path::PathBuf;

/// A migration could not be applied. The database is left at the last
/// version that applied cleanly (each migration is one transaction).
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    #[error(
        "the session database {path} is at schema version {found}, newer than this mia-code understands ({supported}); upgrade mia-code, or point MIA_CODE_HOME at another directory"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error(
        "migration {name} failed on {path}: {source}; the database was left at version {version}"
    )]
    Failed {
        path: PathBuf,
        name: String,
        version: i64,
        /// Boxed: a path is larger on Windows, and this keeps every `Result` small.
        #[source]
        source: Box<rusqlite::Error>,
    },
}

/// The database file is damaged.
#[derive(Debug, thiserror::Error)]
#[error(
    "the session database {path} is damaged ({detail}); `mia-code doctor` checks it, and reopening it moves the damaged file aside and starts a fresh one"
)]
pub struct CorruptionError {
    pub path: PathBuf,
    pub detail: String,
}

/// Another process held the write lock longer than the busy timeout.
#[derive(Debug, thiserror::Error)]
#[error(
    "the session database {path} is busy: another mia-code process held it for more than {waited_ms} ms; nothing was written, try again"
)]
pub struct ConcurrencyError {
    pub path: PathBuf,
    pub waited_ms: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Migration(#[from] MigrationError),
    #[error(transparent)]
    Corruption(#[from] CorruptionError),
    #[error(transparent)]
    Concurrency(#[from] ConcurrencyError),
    #[error("session {session} is in use: {holder}; wait for it to finish or stop it there")]
    SessionBusy { session: String, holder: String },
    #[error("no session with id {0}; `mia-code sessions list` shows the ids")]
    SessionNotFound(String),
    #[error("no message with id {id} in session {session}")]
    MessageNotFound { session: String, id: String },
    /// ForkDepthExceededError (spec 020): forks of forks stop at `max` levels.
    #[error(
        "session {session} is already a fork {depth} levels deep; forks stop at {max} levels (ForkDepthExceededError): fork one of its ancestors, or `mia-code sessions promote {session}` first to make it a top-level session"
    )]
    ForkDepthExceeded {
        session: String,
        depth: u32,
        max: u32,
    },
    /// InvalidForkPointError (spec 020): the message is not a visible message of the session.
    #[error("cannot fork session {session} there (InvalidForkPointError): {reason}")]
    InvalidForkPoint {
        session: String,
        message: String,
        reason: String,
    },
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("stored {what} could not be decoded: {detail}")]
    Decode { what: &'static str, detail: String },
    #[error("database error on {path}: {source}")]
    Sqlite {
        path: PathBuf,
        /// Boxed: a path is larger on Windows, and this keeps every `Result` small.
        #[source]
        source: Box<rusqlite::Error>,
    },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// True for the SQLite result codes that mean the file itself is damaged.
pub(crate) fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
