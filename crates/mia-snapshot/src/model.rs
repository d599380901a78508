use mia_protocol::FileChange;
use serde::{Deserialize, Serialize};

/// Why a file was left out of a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExcludeReason {
    /// NUL byte in the first 8 KB, or a binary file extension.
    Binary,
    /// Larger than the configured size cap.
    TooLarge,
    /// A built-in heavy directory (`node_modules/`, `target/`, ...).
    ExcludedDir,
    /// A nested git repository (its own history keeps it safe).
    NestedRepo,
    /// Behind a symlinked directory: git never follows those.
    BeyondSymlink,
    /// Not a regular file, directory or symlink (socket, fifo, device).
    SpecialFile,
    /// Could not be read.
    Unreadable,
}

impl ExcludeReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Binary => "binary",
            Self::TooLarge => "too-large",
            Self::ExcludedDir => "excluded-dir",
            Self::NestedRepo => "nested-repo",
            Self::BeyondSymlink => "beyond-symlink",
            Self::SpecialFile => "special-file",
            Self::Unreadable => "unreadable",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Binary,
            Self::TooLarge,
            Self::ExcludedDir,
            Self::NestedRepo,
            Self::BeyondSymlink,
            Self::SpecialFile,
            Self::Unreadable,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

/// A file (or directory, with a trailing `/`) noted in a snapshot's metadata
/// but not stored in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ExcludedFile {
    pub path: String,
    pub reason: ExcludeReason,
}

/// How a capture decided what to look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureMode {
    /// Only the paths the tool named were refreshed on top of the previous
    /// snapshot's tree.
    Paths,
    /// The whole project was scanned (stat-cached).
    FullScan,
    /// First snapshot of a git project, seeded from the project's index.
    Seeded,
}

/// Who asked for a capture. All optional: the CLI captures without a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureContext {
    pub session_id: Option<String>,
    pub message_id: Option<String>,
    pub tool_call_id: Option<String>,
}

/// Metadata of one captured snapshot (the tree itself lives in the hidden repo).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Git tree hash (hex).
    pub hash: String,
    /// Number of files (blobs and symlinks) in the tree.
    pub files: u64,
    /// Unix milliseconds.
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Excluded files with reasons (capped at `max_listed_exclusions`).
    pub excluded: Vec<ExcludedFile>,
    /// Total number of exclusions, including the ones not listed.
    pub excluded_total: u64,
    pub mode: CaptureMode,
    /// Wall time of the capture.
    pub ms: u64,
}

/// What kind of step a [`StepRecord`] is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepKind {
    /// A tool call that may change files (write, edit, delete, bash).
    Tool,
    /// An undo/revert: the ids of the steps it undid.
    Revert { undid: Vec<String> },
    /// A redo: the id of the revert step it undid.
    Redo { revert: String },
}

/// One file-modifying step of a session: the snapshots around it and the
/// files it actually changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Unique within the session (the tool call id for tool steps).
    pub id: String,
    pub session_id: String,
    pub message_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(flatten)]
    pub kind: StepKind,
    /// Snapshot taken just before the step.
    pub before: String,
    /// Snapshot taken just after the step.
    pub after: String,
    /// Files the step changed (before → after).
    pub changes: Vec<FileChange>,
    /// Paths the step touched whose content could not be captured (binary,
    /// too large): undo cannot restore them and says so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncaptured: Vec<ExcludedFile>,
    /// Files that changed during the step but not by it: another session's
    /// step (or an undo) changed them meanwhile. Never in `changes`, so
    /// undoing this step leaves them as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign: Vec<ForeignChange>,
    /// Exact permission bits (e.g. `0o600`) of files the step changed whose
    /// bits are not what git's two file modes restore (0644/0755).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub modes: std::collections::BTreeMap<String, u32>,
    pub created_at: i64,
}

/// A file that changed while a step ran, attributed to someone else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignChange {
    pub path: String,
    /// The session whose step changed it (None: a capture without a session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The step's command did not change it (the OS sandbox traced every
    /// file it changed): a person or another program did, while it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_by_command: bool,
}

/// Why a file was not captured, in words for undo messages.
pub fn reason_text(r: ExcludeReason) -> &'static str {
    match r {
        ExcludeReason::Binary => "a binary file",
        ExcludeReason::TooLarge => "over the snapshot size cap",
        ExcludeReason::ExcludedDir => "in an excluded directory",
        ExcludeReason::NestedRepo => "inside a nested git repository",
        ExcludeReason::BeyondSymlink => "behind a symlinked directory",
        ExcludeReason::SpecialFile => "not a regular file",
        ExcludeReason::Unreadable => "it could not be read",
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
