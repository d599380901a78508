//! Ops (what a front end asks the runtime to do) and Events (what the runtime
//! reports). Every front end — CLI, browser UI, desktop app, tests — drives
//! the runtime with the same Ops and renders the same Events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{FileChange, Message, MessageId, Session, SessionId, TokenUsage};

/// A command into the runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a session in a project directory.
    CreateSession {
        directory: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Send a user message and run a turn.
    UserMessage {
        session_id: SessionId,
        text: String,
        /// Use this primary agent from this message on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        /// `provider/model` for this turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Answer a pending permission ask.
    PermissionReply {
        session_id: SessionId,
        request_id: String,
        reply: PermissionReplyKind,
    },
    /// Stop the running turn (stream, permission wait or tool).
    Cancel { session_id: SessionId },
    /// Switch the session's primary agent (applies to the next message; queued while a turn runs).
    SwitchAgent {
        session_id: SessionId,
        agent: String,
    },
    /// Undo the session's last file-changing step, or the step `step` (a step
    /// or tool call id from the timeline) when given.
    Undo {
        session_id: SessionId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
        /// Overwrite files changed outside mia-code since (their content is kept as a backup).
        #[serde(default)]
        force: bool,
    },
    /// Restore the state before `message_id`'s first change (cumulative).
    Revert {
        session_id: SessionId,
        message_id: MessageId,
        #[serde(default)]
        force: bool,
    },
    /// Undo the most recent undo/revert.
    Redo {
        session_id: SessionId,
        #[serde(default)]
        force: bool,
    },
    /// Rename, archive or unarchive a session.
    UpdateSession {
        session_id: SessionId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        archived: Option<bool>,
    },
    /// Delete a session and its messages (refused while a turn runs).
    DeleteSession { session_id: SessionId },
    /// Fork the session at `message_id` (default: its last message) into a
    /// new session (spec 020). With `with_files` the fork works in a new
    /// worktree holding the project as it was at the fork point; without,
    /// in the parent's directory.
    Fork {
        session_id: SessionId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<MessageId>,
        #[serde(default)]
        with_files: bool,
    },
    /// Make a fork a top-level session (its fork metadata is kept).
    Promote { session_id: SessionId },
    /// `/model [AGENT] provider/model`: the model `agent` (default: the
    /// session's current agent) uses in this session from now on, ranking
    /// right after a turn's own override; `None` goes back to the defaults.
    SetModel {
        session_id: SessionId,
        /// The agent it is for (default: the session's current agent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Summarise the session's older messages now (`/compact`), whatever
    /// their count; refused while a turn runs.
    Compact { session_id: SessionId },
}

/// What an undo, revert or redo did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RevertSummary {
    /// False when conflicts stopped it: nothing was changed.
    pub applied: bool,
    /// The spec 021 message (also appended to the session when applied).
    pub message: String,
    pub restored: Vec<String>,
    pub removed: Vec<String>,
    pub conflicts: Vec<RevertConflict>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RevertConflict {
    pub path: String,
    pub reason: String,
    /// Where the current content was kept before a forced revert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<String>,
}

/// How a person answered a permission ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PermissionReplyKind {
    /// Allow this call only.
    Once,
    /// Allow for the rest of the session (permission + pattern).
    Session,
    /// Allow in this project from now on (persisted, revocable).
    Project,
    /// Deny this call only.
    Deny,
    /// Deny for the rest of the session.
    Never,
    /// Deny, and tell the model why.
    RejectWithFeedback { feedback: String },
}

/// One judged piece of a shell command, for the permission dialog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandSegment {
    pub command: String,
    pub decision: crate::PermissionAction,
    #[serde(default)]
    pub dangerous: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Everything a permission dialog needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PermissionRequest {
    pub id: String,
    pub session_id: SessionId,
    pub agent: String,
    pub tool: String,
    /// The tool call this ask is about (links the dialog to its tool card).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub permission: String,
    pub input: Value,
    /// The path, command or URL being judged, as shown to the user.
    pub target: String,
    #[serde(default)]
    pub segments: Vec<CommandSegment>,
    /// The rule that produced "ask", e.g. `ask bash (built-in defaults)`; absent when no rule matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_rule: Option<String>,
    pub reason: String,
    /// Which replies can be offered (e.g. no "session"/"project" for commands with expansions).
    pub options: Vec<crate::ReplyOption>,
    /// For a subagent's ask: the top-level session its delegation started
    /// from (the ask shows there too; answer it with this request's `session_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_session_id: Option<SessionId>,
    /// For a write or an edit: the change it would make, against the file
    /// as it is now (a new file: all additions). Absent when it cannot be
    /// known (the edit does not apply, the file is over 1 MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed: Option<crate::FileDiff>,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    Completed,
    Cancelled,
    Error,
    StepLimit,
    /// Stopped because a permission was denied with nobody to ask, or a doom loop was stopped.
    Blocked,
}

/// A notification out of the runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SessionUpdated {
        session: Session,
    },
    /// A message was stored (user message at once; assistant message when its step ends).
    MessageStored {
        message: Message,
    },
    /// An assistant step started streaming.
    StepStarted {
        session_id: SessionId,
        message_id: MessageId,
        agent: String,
        model: String,
    },
    TextDelta {
        session_id: SessionId,
        message_id: MessageId,
        text: String,
    },
    ReasoningDelta {
        session_id: SessionId,
        message_id: MessageId,
        text: String,
    },
    ToolCall {
        session_id: SessionId,
        message_id: MessageId,
        call_id: String,
        tool: String,
        input: Value,
    },
    /// Before each request: how full the model's context will be.
    ContextUsage {
        session_id: SessionId,
        usage: crate::ContextUsage,
    },
    /// Output of a running tool as it comes (bash: stdout and stderr,
    /// batched every 100 ms, at most 256 KiB). Not stored: the `ToolResult`
    /// that follows carries the whole output.
    ToolOutput {
        session_id: SessionId,
        message_id: MessageId,
        call_id: String,
        text: String,
    },
    PermissionAsked {
        request: PermissionRequest,
    },
    PermissionResolved {
        session_id: SessionId,
        request_id: String,
        decision: crate::Resolution,
        /// `rule`, `user`, `headless` or `plugin NAME`.
        by: String,
        reason: String,
        /// For a subagent's ask: the top-level session it also showed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        root_session_id: Option<SessionId>,
    },
    ToolResult {
        session_id: SessionId,
        message_id: MessageId,
        call_id: String,
        tool: String,
        output: String,
        is_error: bool,
        duration_ms: u64,
        /// Shell commands: how the OS sandbox confined it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<Box<crate::SandboxNote>>,
    },
    /// A tool's non-text results (images, resource links), just before its `tool_result`.
    ToolContent {
        session_id: SessionId,
        message_id: MessageId,
        call_id: String,
        items: Vec<crate::ResultContent>,
    },
    Snapshot {
        session_id: SessionId,
        call_id: String,
        hash: Option<String>,
        files: Vec<FileChange>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unavailable: Option<String>,
    },
    Retrying {
        session_id: SessionId,
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    AgentSwitched {
        session_id: SessionId,
        from: String,
        to: String,
        /// True when the switch waits for the running turn to finish.
        queued: bool,
    },
    Error {
        session_id: Option<SessionId>,
        kind: String,
        message: String,
        retryable: bool,
    },
    /// Something the user should know that is not an error ("Installing
    /// plugin x@2.1.0...", a plugin disabled).
    Notice {
        session_id: Option<SessionId>,
        message: String,
    },
    /// A hook ran (docs/configuration.md#hooks): for a tool call (its card
    /// shows it) or for the session (`Stop`, `UserPromptSubmit`, ...).
    HookRan {
        session_id: SessionId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        run: crate::HookRun,
    },
    TurnFinished {
        session_id: SessionId,
        end: TurnEnd,
        steps: u32,
        usage: TokenUsage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// A `task` call waits for a free slot (at most 3 subagents run per session).
    SubagentQueued {
        session_id: SessionId,
        call_id: String,
        agent: String,
    },
    /// A subagent started in its own session (`child_session_id`).
    SubagentStarted {
        session_id: SessionId,
        child_session_id: SessionId,
        call_id: String,
        agent: String,
        description: String,
    },
    /// A subagent finished.
    SubagentFinished {
        session_id: SessionId,
        child_session_id: SessionId,
        call_id: String,
        agent: String,
        status: SubagentStatus,
        duration_ms: u64,
        steps: u32,
        tool_calls: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// Compaction began.
    CompactionStarted {
        session_id: SessionId,
        trigger: CompactionTrigger,
        /// Estimated tokens of the conversation before.
        tokens_before: u64,
    },
    /// Compaction stored its summary (`message_id`); `compacted` messages
    /// were archived, `retained` kept verbatim.
    CompactionFinished {
        session_id: SessionId,
        message_id: MessageId,
        trigger: CompactionTrigger,
        compacted: u64,
        retained: u64,
        tokens_before: u64,
        tokens_after: u64,
    },
    /// Compaction failed; nothing was changed. `message` says what to do.
    CompactionFailed {
        session_id: SessionId,
        trigger: CompactionTrigger,
        message: String,
    },
    /// A line of a worktree's start script (or check command) as it runs.
    WorktreeLog {
        /// The repository's root directory.
        directory: String,
        /// The worktree (or `main` for a check of the main tree).
        name: String,
        command: String,
        line: String,
        stderr: bool,
    },
}

impl Event {
    /// Another session that shows this event: a subagent's permission ask
    /// also appears in the top-level session it was delegated from.
    pub fn also_for(&self) -> Option<SessionId> {
        match self {
            Self::PermissionAsked { request } => request.root_session_id,
            Self::PermissionResolved {
                root_session_id, ..
            } => *root_session_id,
            _ => None,
        }
    }

    /// The session this event belongs to, if any.
    pub fn session_id(&self) -> Option<SessionId> {
        match self {
            Self::SessionUpdated { session } => Some(session.id),
            Self::MessageStored { message } => Some(message.session_id),
            Self::PermissionAsked { request } => Some(request.session_id),
            Self::Error { session_id, .. } | Self::Notice { session_id, .. } => *session_id,
            Self::WorktreeLog { .. } => None,
            Self::StepStarted { session_id, .. }
            | Self::TextDelta { session_id, .. }
            | Self::ReasoningDelta { session_id, .. }
            | Self::ToolCall { session_id, .. }
            | Self::ToolOutput { session_id, .. }
            | Self::ContextUsage { session_id, .. }
            | Self::PermissionResolved { session_id, .. }
            | Self::ToolResult { session_id, .. }
            | Self::ToolContent { session_id, .. }
            | Self::HookRan { session_id, .. }
            | Self::Snapshot { session_id, .. }
            | Self::Retrying { session_id, .. }
            | Self::AgentSwitched { session_id, .. }
            | Self::SubagentQueued { session_id, .. }
            | Self::SubagentStarted { session_id, .. }
            | Self::SubagentFinished { session_id, .. }
            | Self::CompactionStarted { session_id, .. }
            | Self::CompactionFinished { session_id, .. }
            | Self::CompactionFailed { session_id, .. }
            | Self::TurnFinished { session_id, .. } => Some(*session_id),
        }
    }
}

/// How a subagent's delegation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubagentStatus {
    Completed,
    Timeout,
    Cancelled,
    Error,
}

impl SubagentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::Error => "error",
        }
    }
}

impl std::fmt::Display for SubagentStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The session grew past `compaction.messages`.
    Messages,
    /// The next request would fill the token budget.
    Tokens,
    /// `/compact`.
    Manual,
    /// The provider said the request did not fit.
    Overflow,
}

impl CompactionTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Messages => "messages",
            Self::Tokens => "tokens",
            Self::Manual => "manual",
            Self::Overflow => "overflow",
        }
    }
}
