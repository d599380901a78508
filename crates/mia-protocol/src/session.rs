use serde::{Deserialize, Serialize};

use crate::{MessageId, SessionId};

/// What a session is doing right now.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    #[default]
    Idle,
    Busy,
    Compacting,
}

impl SessionStatus {
    pub const ALL: [SessionStatus; 3] = [Self::Idle, Self::Busy, Self::Compacting];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Busy => "busy",
            Self::Compacting => "compacting",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// Where a forked session came from (spec 020).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForkInfo {
    pub source_session_id: SessionId,
    pub source_message_id: MessageId,
    pub forked_at: i64,
    pub fork_depth: u32,
}

/// Who started a subagent's session (spec 015): the parent session and its
/// `task` call. Not a fork: a spawned session is not in the fork tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpawnInfo {
    pub session_id: SessionId,
    pub call_id: String,
    /// The parent's agent at the time.
    pub agent: String,
}

/// One conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Session {
    pub id: SessionId,
    /// Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
    pub slug: String,
    /// Stable hash of the canonical project directory.
    pub project_id: String,
    /// Absolute path of the project root.
    pub directory: String,
    pub parent_id: Option<SessionId>,
    pub fork: Option<ForkInfo>,
    /// Set for a subagent's session: who spawned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawned_by: Option<SpawnInfo>,
    /// Models picked with `/model` in this session, per agent (`provider/model`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub agent_models: std::collections::BTreeMap<String, String>,
    pub title: String,
    /// mia-code version that created the session.
    pub version: String,
    pub status: SessionStatus,
    /// Active primary agent (plan/build/...), if one was chosen.
    pub agent: Option<String>,
    /// Model reference `provider/model`, if one was chosen.
    pub model: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub archived_at: Option<i64>,
}
