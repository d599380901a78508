//! mia-permission: the permission engine of mia-code.
//!
//! * [`Policy::compile`] builds one agent's ruleset from plain data
//!   ([`PolicyInput`]: rule lists per layer, each with its source file), in
//!   this order, checked top to bottom (first match wins): built-in
//!   invariants; session overrides; "always for this project" approvals;
//!   `agent.<name>.permissions`; the agent's built-in restrictions; project
//!   config (deny/ask only until the workspace is trusted); global config; the
//!   agent's built-in grants; built-in defaults. Nothing matched: ask where a
//!   person can answer, deny otherwise.
//! * [`Checker::check`] judges a [`Request`]: paths are canonicalised by a
//!   [`PathResolver`] ([`PathContext`] is the file-system one), shell commands
//!   are parsed with tree-sitter-bash into segments ([`bash::parse`]) and every
//!   segment, argument path and redirect target is judged; the strictest wins.
//! * [`apply_reply`] turns an answer to an ask into session rules or project
//!   approvals; [`AuditRecord`] is what gets logged and stored.

pub mod agents;
pub mod audit;
pub mod bash;
pub mod commands;
pub mod engine;
pub mod error;
pub mod path;
pub mod policy;
pub mod powershell;
pub mod readonly;
pub mod reply;
pub mod rules;

pub use audit::{Audit, AuditRecord};
pub use bash::ShellDialect;
pub use engine::{
    Answerer, Checker, Decision, Matched, Request, SegmentDecision, SubCheck, Target,
};
pub use error::{PathError, ReplyError, RuleError};
pub use mia_protocol::{PermissionAction, PermissionRule};
pub use path::{CanonicalPath, PathContext, PathResolver};
pub use policy::{LintWarning, Policy, PolicyInput, RuleList};
pub use reply::{Reply, ReplyOutcome, SessionRules, apply_reply};
pub use rules::{CompiledRule, Layer};
