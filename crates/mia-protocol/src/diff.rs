//! Structured diffs between two snapshots (spec 077), as the runtime sends
//! them to front ends. Computed by `mia-snapshot`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiffStatus {
    Added,
    Deleted,
    Modified,
}

impl DiffStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Deleted => "deleted",
            Self::Modified => "modified",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LineType {
    Add,
    Delete,
    Context,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    #[serde(rename = "type")]
    pub kind: LineType,
    /// The line without its trailing newline (a `\r` of CRLF is kept).
    pub content: String,
    /// Line number in the "after" file for additions and context, in the
    /// "before" file for deletions (1-based).
    pub line_number: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_line: Option<u32>,
    /// The file ends with this line and it has no newline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_newline: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// 1-based start in the before-version (git's convention: the line
    /// before the hunk when it has no before-lines).
    pub start_before: u32,
    pub start_after: u32,
    pub lines_before: u32,
    pub lines_after: u32,
    pub lines: Vec<DiffLine>,
}

/// How one file differs between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    pub file: String,
    pub status: DiffStatus,
    /// Full content before (empty when added or binary).
    pub before: String,
    /// Full content after (empty when deleted or binary).
    pub after: String,
    pub additions: u32,
    pub deletions: u32,
    pub hunks: Vec<Hunk>,
    /// Binary content (NUL byte or not UTF-8): reported, not diffed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// Git modes (`100644`, `100755`, `120000`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_id: Option<String>,
    /// Set when the line endings changed (`LF → CRLF`, `CRLF → mixed`): the
    /// hunks then show lines whose visible text did not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_endings: Option<String>,
}

/// Aggregate statistics over a set of [`FileDiff`]s.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct DiffStats {
    pub files_changed: u32,
    pub files_added: u32,
    pub files_deleted: u32,
    pub files_modified: u32,
    pub total_additions: u64,
    pub total_deletions: u64,
    /// additions − deletions.
    #[serde(rename = "estimatedLOCImpact")]
    pub estimated_loc_impact: i64,
}
