use std::fmt;

use serde::{Deserialize, Serialize};

/// What a permission rule decides.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PermissionAction {
    Allow,
    Ask,
    Deny,
}

impl PermissionAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for PermissionAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One permission rule as written in config (spec 074):
/// `{"permission": "write", "pattern": "*.lock", "action": "deny"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionRule {
    /// Tool or action id (`read`, `write`, `edit`, `bash`, ...) or `*` for all.
    pub permission: String,
    /// Glob on paths, or a word pattern for `bash` (`git status *`). Absent: everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    pub action: PermissionAction,
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(p) => write!(f, "{} {} {}", self.action, self.permission, p),
            None => write!(f, "{} {}", self.action, self.permission),
        }
    }
}

/// One audited permission check: every check produces one; the runtime
/// logs it and the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Milliseconds since the Unix epoch.
    pub timestamp_ms: i64,
    pub session: Option<String>,
    pub agent: String,
    pub permission: String,
    pub target: String,
    /// The deciding rule as `action permission [pattern]`, if a rule decided.
    pub matched_rule: Option<String>,
    pub layer: Option<String>,
    pub source: Option<String>,
    pub decision: PermissionAction,
    pub reason: String,
}

/// How an ask (or a denial) was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    Allow,
    Deny,
}

impl Resolution {
    pub fn allowed(proceed: bool) -> Self {
        if proceed { Self::Allow } else { Self::Deny }
    }
}

/// An answer an ask offers (`PermissionRequest::options`), or the one a
/// person gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplyOption {
    Once,
    Session,
    Project,
    Deny,
    Never,
    RejectWithFeedback,
}

impl ReplyOption {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Session => "session",
            Self::Project => "project",
            Self::Deny => "deny",
            Self::Never => "never",
            Self::RejectWithFeedback => "reject_with_feedback",
        }
    }
}

impl fmt::Display for ReplyOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
