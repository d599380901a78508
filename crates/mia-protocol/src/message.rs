use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{MessageId, PartId, SessionId};

/// Version of the part content encoding written by this build. Stored next to
/// every part so later builds can read (and migrate) older content.
pub const CONTENT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::User, Self::Assistant, Self::System]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// What kind of message this is, beyond its role.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MessageType {
    /// An ordinary conversation turn.
    #[default]
    Normal,
    /// The summary that replaces older messages after compaction (spec 019).
    CompactionSummary,
    /// A revert/undo record appended to the session (spec 021).
    Revert,
    /// A fork marker: "Forked from session ... at message ..." (spec 020).
    Fork,
    /// A plan/build switch or other mode notice (spec 014).
    ModeSwitch,
}

impl MessageType {
    const ALL: [MessageType; 5] = [
        Self::Normal,
        Self::CompactionSummary,
        Self::Revert,
        Self::Fork,
        Self::ModeSwitch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::CompactionSummary => "compaction_summary",
            Self::Revert => "revert",
            Self::Fork => "fork",
            Self::ModeSwitch => "mode_switch",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// The permission decision recorded with a tool result (what the tool card shows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PermissionNote {
    pub decision: crate::Resolution,
    /// `user`, `rule`, `headless` or `plugin NAME`.
    pub by: String,
    /// The answer a person gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<crate::ReplyOption>,
    /// The denial message or the feedback given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// How the OS sandbox confines commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxModeView {
    /// Writes only in the project (and the session's /tmp).
    WorkspaceWrite,
    /// No writes.
    ReadOnly,
    /// Not confined.
    Off,
}

impl SandboxModeView {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }
}

impl std::fmt::Display for SandboxModeView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What confines commands on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum SandboxMechanism {
    /// Linux with user namespaces: the whole wall.
    #[serde(rename = "bubblewrap")]
    Bubblewrap,
    /// Linux without user namespaces: the weaker fallback.
    #[serde(rename = "landlock+seccomp")]
    LandlockSeccomp,
    /// macOS.
    #[serde(rename = "seatbelt")]
    Seatbelt,
}

impl SandboxMechanism {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bubblewrap => "bubblewrap",
            Self::LandlockSeccomp => "landlock+seccomp",
            Self::Seatbelt => "seatbelt",
        }
    }
}

impl std::fmt::Display for SandboxMechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a command ran outside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnconfinedReason {
    /// `sandbox.mode` is off.
    Config,
    /// The user allowed it once outside the sandbox.
    Escalated,
    /// No sandbox on this machine; the user allowed it.
    Unavailable,
}

/// What the sandbox seems to have blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxBlocked {
    Write,
    Network,
}

/// How a shell command was confined by the OS sandbox (what the tool card shows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SandboxNote {
    /// How it was confined (`off`: it ran unconfined).
    pub mode: SandboxModeView,
    /// Its network (absent when unconfined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::PermissionAction>,
    /// Absent when unconfined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<SandboxMechanism>,
    /// Why it ran unconfined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconfined: Option<UnconfinedReason>,
    /// What the sandbox seems to have blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<SandboxBlocked>,
    /// False when the mechanism was the weaker fallback (Landlock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<bool>,
    /// What the mechanism could not hold (the fallback's list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
    /// The hosts the command's connections went to through the proxy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<NetworkHost>,
}

/// One host a sandboxed command connected to (or was refused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NetworkHost {
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    /// What allowed it (`registry`, `rule or answer`) or why it was refused.
    pub reason: String,
    /// The program that connected, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// Token counts reported by a provider for one assistant message.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct TokenUsage {
    pub input: u64,
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
}

/// Free-form but typed message metadata: model, tokens, cost, timing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MessageMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenUsage>,
    /// Cost in US dollars; absent when the model's price is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Why the model stopped (`end_turn`, `tool_use`, `max_tokens`, `cancelled`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<String>,
    /// Anything else a feature wants to keep with the message.
    #[serde(default, flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// One non-text piece of a tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultContent {
    /// Base64 image data.
    Image { media_type: String, data: String },
    ResourceLink {
        uri: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    Resource {
        uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
}

/// How a step changed one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileChangeKind {
    Added,
    Modified,
    Deleted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileChange {
    pub path: String,
    pub kind: FileChangeKind,
    #[serde(default)]
    pub additions: u32,
    #[serde(default)]
    pub deletions: u32,
}

/// The content of one part, tagged by `type`. New variants may be added; a
/// reader that meets a type it does not know keeps it as [`PartContent::Unknown`]
/// so nothing is lost when an older build opens a newer database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PartContent {
    Text {
        text: String,
        /// Written by mia-code rather than typed by a person or the model.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        synthetic: bool,
    },
    Reasoning {
        text: String,
        /// Provider signature that must accompany the reasoning when it is
        /// sent back (Anthropic thinking with tool use).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    ToolCall {
        call_id: String,
        tool: String,
        input: Value,
        /// Opaque provider data sent back with the call (Gemini `thoughtSignature`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    ToolResult {
        call_id: String,
        tool: String,
        output: String,
        #[serde(default)]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        /// How the call's permission ask was answered, or the rule that denied
        /// it (absent when a rule allowed it without asking).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        permission: Option<PermissionNote>,
        /// Shell commands: how the OS sandbox confined it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<Box<SandboxNote>>,
        /// The hooks that ran for this call (`PreToolUse`, `PostToolUse`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        hooks: Vec<crate::HookRun>,
    },
    Error {
        /// Machine-readable class (`rate_limited`, `network`, `auth`, ...).
        kind: String,
        message: String,
        #[serde(default)]
        retryable: bool,
    },
    Image {
        media_type: String,
        /// Base64 data, or a `file://` reference for large images.
        data: String,
    },
    File {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
    /// The snapshot taken before a file-changing step and what that step changed.
    Snapshot {
        hash: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        #[serde(default)]
        files: Vec<FileChange>,
        /// Set when no snapshot could be taken; undo is unavailable for the step.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unavailable: Option<String>,
    },
    Revert {
        target_message_id: Option<MessageId>,
        restored: Vec<String>,
        removed: Vec<String>,
        #[serde(default)]
        conflicts: Vec<String>,
        /// Snapshot of the state just before the revert (so it can be redone).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pre_revert_snapshot: Option<String>,
    },
    /// What a tool returned besides text (an MCP server's images and
    /// resource links), for the UI; the model gets the text result.
    ToolContent {
        call_id: String,
        items: Vec<ResultContent>,
    },
    CompactionSummary {
        summary: String,
        /// Number of messages this summary stands for.
        compacted_messages: u32,
    },
    Subagent {
        session_id: SessionId,
        agent: String,
        description: String,
        status: String,
    },
    /// Dual-perspective commentary from the unifier layer (specs 012/014).
    Commentary { perspective: String, text: String },
    /// A part written by a newer build; kept verbatim.
    #[serde(skip)]
    Unknown { kind: String, raw: Value },
}

impl PartContent {
    /// The value stored in the `parts.type` column.
    pub fn kind(&self) -> &str {
        match self {
            Self::Text { .. } => "text",
            Self::Reasoning { .. } => "reasoning",
            Self::ToolCall { .. } => "tool_call",
            Self::ToolResult { .. } => "tool_result",
            Self::ToolContent { .. } => "tool_content",
            Self::Error { .. } => "error",
            Self::Image { .. } => "image",
            Self::File { .. } => "file",
            Self::Snapshot { .. } => "snapshot",
            Self::Revert { .. } => "revert",
            Self::CompactionSummary { .. } => "compaction_summary",
            Self::Subagent { .. } => "subagent",
            Self::Commentary { .. } => "commentary",
            Self::Unknown { kind, .. } => kind,
        }
    }

    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            synthetic: false,
        }
    }

    /// Encode as stored: the tagged object plus a `v` version field.
    pub fn to_stored_json(&self) -> Result<String, serde_json::Error> {
        if let Self::Unknown { raw, .. } = self {
            return serde_json::to_string(raw);
        }
        let mut value = serde_json::to_value(self)?;
        if let Value::Object(map) = &mut value {
            map.insert("v".into(), Value::from(CONTENT_VERSION));
        }
        serde_json::to_string(&value)
    }

    /// Decode stored content. Content this build cannot read is kept as
    /// [`PartContent::Unknown`], never dropped.
    pub fn from_stored_json(kind: &str, json: &str) -> Result<Self, serde_json::Error> {
        // Fast path: the `v` field is ignored by the tagged variants.
        if let Ok(content) = serde_json::from_str::<PartContent>(json) {
            return Ok(content);
        }
        let raw: Value = serde_json::from_str(json)?;
        Ok(Self::Unknown {
            kind: kind.to_string(),
            raw,
        })
    }
}

/// One stored content unit of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Part {
    pub id: PartId,
    pub message_id: MessageId,
    pub index: u32,
    pub created_at: i64,
    pub content: PartContent,
}

/// One stored message with its parts in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Message {
    pub id: MessageId,
    pub session_id: SessionId,
    pub role: Role,
    #[serde(rename = "type")]
    pub message_type: MessageType,
    pub metadata: MessageMetadata,
    pub created_at: i64,
    /// Set when a compaction summary replaced this message in the model's
    /// context; the message itself is kept (spec 019: nothing is lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacted_by: Option<MessageId>,
    pub parts: Vec<Part>,
}

/// A message to append: the store assigns ids and timestamps.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewMessage {
    /// Keeps an id handed out earlier (e.g. while the message streamed); fresh otherwise.
    pub id: Option<MessageId>,
    pub role: Option<Role>,
    pub message_type: MessageType,
    pub metadata: MessageMetadata,
    pub parts: Vec<PartContent>,
}

impl NewMessage {
    pub fn new(role: Role, parts: Vec<PartContent>) -> Self {
        Self {
            role: Some(role),
            parts,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_json_is_tagged_and_versioned() {
        let c = PartContent::ToolCall {
            call_id: "c1".into(),
            tool: "read".into(),
            input: serde_json::json!({"path": "a.rs"}),
            signature: None,
        };
        let s = c.to_stored_json().unwrap();
        let v: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["type"], "tool_call");
        assert_eq!(v["v"], CONTENT_VERSION);
        assert_eq!(PartContent::from_stored_json("tool_call", &s).unwrap(), c);
    }

    #[test]
    fn unknown_content_is_kept_verbatim() {
        let json = r#"{"type":"hologram","v":9,"beam":[1,2]}"#;
        let c = PartContent::from_stored_json("hologram", json).unwrap();
        assert_eq!(c.kind(), "hologram");
        let back: Value = serde_json::from_str(&c.to_stored_json().unwrap()).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(json).unwrap());
    }
}
