//! Audit records: every check produces one; the caller logs it (`tracing`)
//! and stores it (mia-store).

pub use mia_protocol::AuditRecord;
use mia_protocol::PermissionAction;

use crate::engine::Decision;

/// An [`AuditRecord`] from a check's decision, and its `tracing` event.
pub trait Audit {
    /// The record of `decision`.
    fn new(decision: &Decision, agent: &str, session: Option<&str>, timestamp_ms: i64) -> Self;
    /// Emit the record as a `tracing` event: deny/ask at warn, allow at debug.
    fn emit(&self);
}

impl Audit for AuditRecord {
    fn new(decision: &Decision, agent: &str, session: Option<&str>, timestamp_ms: i64) -> Self {
        Self {
            timestamp_ms,
            session: session.map(str::to_string),
            agent: agent.to_string(),
            permission: decision.permission.clone(),
            target: decision.target.clone(),
            matched_rule: decision.matched.as_ref().map(|m| m.rule.to_string()),
            layer: decision
                .matched
                .as_ref()
                .map(|m| m.layer.as_str().to_string()),
            source: decision.matched.as_ref().map(|m| m.source.clone()),
            decision: decision.decision,
            reason: decision.reason.clone(),
        }
    }

    fn emit(&self) {
        let rule = self.matched_rule.as_deref().unwrap_or("");
        let layer = self.layer.as_deref().unwrap_or("");
        let source = self.source.as_deref().unwrap_or("");
        let session = self.session.as_deref().unwrap_or("");
        match self.decision {
            PermissionAction::Allow => tracing::debug!(
                target: "mia_permission::audit",
                session, agent = %self.agent, permission = %self.permission, target_ = %self.target,
                rule, layer, source, decision = "allow", "permission check"
            ),
            d => tracing::warn!(
                target: "mia_permission::audit",
                session, agent = %self.agent, permission = %self.permission, target_ = %self.target,
                rule, layer, source, decision = d.as_str(), reason = %self.reason, "permission check"
            ),
        }
    }
}
