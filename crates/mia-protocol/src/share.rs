//! Shared sessions (spec 022): the payload a share server stores, the
//! preview a user approves before anything leaves the machine, and the
//! record of a share this machine created.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The payload format's version. A server refuses a major version it does
/// not know; a minor bump only adds optional fields.
pub const SHARE_PAYLOAD_VERSION: &str = "1.0";

/// What is uploaded: the session, its messages and (optionally) its diffs,
/// after redaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharePayload {
    pub version: String,
    pub session: SharedSession,
    #[serde(default)]
    pub messages: Vec<SharedMessage>,
    #[serde(default)]
    pub diffs: Vec<SharedDiff>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharedSession {
    /// The local session's id (so a re-share updates the same share).
    pub id: String,
    pub title: String,
    /// The project's directory name (never its full path).
    pub project: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharedMessage {
    /// The local message id (what the preview's exclusions name).
    pub id: String,
    /// `user` or `assistant`.
    pub role: String,
    pub parts: Vec<SharedPart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<SharedMessageMeta>,
    pub created_at: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharedMessageMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Input + output tokens of the message's model call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SharedPart {
    Text {
        content: String,
    },
    Reasoning {
        content: String,
    },
    ToolCall {
        call_id: String,
        name: String,
        args: Value,
    },
    ToolResult {
        call_id: String,
        name: String,
        output: String,
        #[serde(default)]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        /// The result was left out (`includeToolResults: false` or excluded
        /// in the preview); `output` is empty then.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        omitted: bool,
    },
    Error {
        message: String,
    },
    /// A compaction summary standing for earlier messages.
    Summary {
        content: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharedDiff {
    pub file: String,
    /// `added`, `modified`, `deleted` or `renamed`.
    pub status: String,
    pub additions: u32,
    pub deletions: u32,
    /// Unified diff of the file (empty for a binary file).
    pub patch: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

/// Where in the payload a redaction was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "in", rename_all = "snake_case")]
pub enum RedactionPlace {
    Title,
    Message { message_id: String, part: usize },
    Diff { file: String },
}

/// One replacement made in the payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Redaction {
    /// What was found: `anthropic-api-key`, `aws-secret`, `home-path`, `pattern:<n>`, ...
    pub kind: String,
    pub place: RedactionPlace,
    /// The text that now stands in the payload (`[REDACTED:anthropic-api-key]`, `~`).
    pub replacement: String,
    /// A masked hint of what was replaced (`sk-a…9f`), never the secret itself.
    pub hint: String,
}

/// What a user sees before sharing: exactly the payload that would be sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharePreview {
    pub payload: SharePayload,
    pub redactions: Vec<Redaction>,
    /// The server it would go to (none configured: sharing needs one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// `disabled`, `ask` or `auto`.
    pub mode: String,
    /// The existing share of this session, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing: Option<ShareRecord>,
    /// Payload size in bytes as it would be sent.
    pub bytes: u64,
}

/// What the user chose to leave out of a share.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShareRequest {
    /// Message ids left out entirely.
    #[serde(default)]
    pub exclude_messages: Vec<String>,
    /// Tool call ids whose results are left out.
    #[serde(default)]
    pub exclude_tool_results: Vec<String>,
    /// Another server than the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// A share this machine created ("My shares").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShareRecord {
    /// The server's id of the share.
    pub id: String,
    pub url: String,
    /// The server's base URL.
    pub server: String,
    /// The local session, while it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub session_title: String,
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// The local session was deleted (the share can still be revoked).
    #[serde(default)]
    pub session_deleted: bool,
}
