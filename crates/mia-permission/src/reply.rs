//! Answers to an `ask`: once, always (session), always for this project, no,
//! never (session deny), reject with feedback.

use mia_protocol::{PermissionAction, PermissionRule};

use crate::engine::Decision;
use crate::error::ReplyError;

/// A person's answer to an ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Allow this invocation only.
    Once,
    /// Allow, and add session allow rules for this permission + pattern.
    Always,
    /// Allow, and persist the rules as "always for this project" approvals.
    AlwaysForProject,
    /// Deny this invocation only.
    Reject,
    /// Deny, and add session deny rules.
    Never,
    /// Deny; the text goes back to the model.
    RejectWithFeedback(String),
}

/// What to do after a reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplyOutcome {
    pub proceed: bool,
    /// Rules to prepend to the session overrides.
    pub session_rules: Vec<PermissionRule>,
    /// Rules to persist as project approvals.
    pub project_rules: Vec<PermissionRule>,
    /// The message the model receives when the tool is skipped.
    pub message_to_model: Option<String>,
}

/// Apply a reply to an `ask` decision.
pub fn apply_reply(decision: &Decision, reply: Reply) -> Result<ReplyOutcome, ReplyError> {
    if decision.decision != PermissionAction::Ask {
        return Err(ReplyError::NotAnAsk(decision.decision.to_string()));
    }
    let what = format!("{} {}", decision.permission, decision.target)
        .trim()
        .to_string();
    let rejected = format!("Permission denied: the user rejected {what}");
    Ok(match reply {
        Reply::Once => ReplyOutcome {
            proceed: true,
            ..Default::default()
        },
        Reply::Always | Reply::AlwaysForProject => {
            if decision.always.is_empty() {
                return Err(ReplyError::AlwaysNotOffered(what));
            }
            let rules = decision.always.clone();
            if reply == Reply::Always {
                ReplyOutcome {
                    proceed: true,
                    session_rules: rules,
                    ..Default::default()
                }
            } else {
                ReplyOutcome {
                    proceed: true,
                    project_rules: rules,
                    ..Default::default()
                }
            }
        }
        Reply::Reject => ReplyOutcome {
            proceed: false,
            message_to_model: Some(rejected),
            ..Default::default()
        },
        Reply::Never => {
            let rules = decision
                .always
                .iter()
                .map(|r| PermissionRule {
                    action: PermissionAction::Deny,
                    ..r.clone()
                })
                .collect();
            ReplyOutcome {
                proceed: false,
                session_rules: rules,
                message_to_model: Some(format!(
                    "{rejected} and asked not to be asked again this session"
                )),
                ..Default::default()
            }
        }
        Reply::RejectWithFeedback(text) => ReplyOutcome {
            proceed: false,
            message_to_model: Some(format!("{rejected}. The user said: {text}")),
            ..Default::default()
        },
    })
}

/// The session overrides of one session: newest answers are checked first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionRules {
    rules: Vec<PermissionRule>,
}

impl SessionRules {
    /// Record the rules of an answer (they take precedence over older ones).
    pub fn add(&mut self, rules: &[PermissionRule]) {
        for r in rules.iter().rev() {
            self.rules
                .retain(|x| !(x.permission == r.permission && x.pattern == r.pattern));
            self.rules.insert(0, r.clone());
        }
    }

    /// The rules in checking order (for [`crate::PolicyInput::session`]).
    pub fn rules(&self) -> &[PermissionRule] {
        &self.rules
    }
}
