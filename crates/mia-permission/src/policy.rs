//! The compiled, layered ruleset of one agent: the input is plain data (rule
//! lists with source labels), so it does not depend on how config is loaded.

use std::collections::HashMap;
use std::fmt::Write as _;

use mia_protocol::{PermissionAction, PermissionRule};
use serde::Serialize;

use crate::agents::{self, BUILT_IN};
use crate::error::RuleError;
use crate::rules::{CompiledRule, Layer, MatchInput};

/// The rules of one source (a config file, or `built-in`), in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleList {
    /// A file path or a label such as `built-in`.
    pub source: String,
    pub rules: Vec<PermissionRule>,
}

impl RuleList {
    pub fn new(source: impl Into<String>, rules: Vec<PermissionRule>) -> Self {
        Self {
            source: source.into(),
            rules,
        }
    }
}

/// Everything needed to compile an agent's ruleset. Each `Vec<RuleList>` is in
/// checking order: the file that wins comes first (for config loaded global
/// `~/.config/mia-code/config.json` then `~/.mia-code.json`, pass the latter
/// first). Within a file, rules are checked top to bottom.
#[derive(Debug, Clone, Default)]
pub struct PolicyInput {
    /// Agent name (`build`, `plan`, ... or a custom agent).
    pub agent: String,
    /// `permissions` of global config files.
    pub global: Vec<RuleList>,
    /// `permissions` of project config files.
    pub project: Vec<RuleList>,
    /// `agent.<name>.permissions` of global config files.
    pub agent_global: Vec<RuleList>,
    /// `agent.<name>.permissions` of project config files.
    pub agent_project: Vec<RuleList>,
    /// Session overrides from "always"/"never" answers, most recent first.
    pub session: Vec<PermissionRule>,
    /// "Always for this project" approvals.
    pub project_approvals: Vec<PermissionRule>,
    /// Has the user trusted this workspace? Until then project rules may only tighten.
    pub workspace_trusted: bool,
    /// Home directory (expands `~/` in patterns).
    pub home: Option<String>,
    /// More paths whose writes always ask, added to the built-in invariants: e.g.
    /// `$MIA_CODE_HOME/**` when it is not under `~/.mia-code`. Absolute or `~/` patterns.
    pub extra_protected: Vec<String>,
    /// mia-code's own secrets (`$MIA_CODE_HOME/credentials.json`, `server.json`):
    /// no agent may read them (an invariant deny). Absolute or `~/` patterns;
    /// the `~/.mia-code/` ones are always added.
    pub secrets: Vec<String>,
    /// mia-code's own data and config (the store, snapshots, logs, the global
    /// config files that hold API keys): reading them asks (an invariant:
    /// no rule lifts it). Absolute or `~/` patterns; `~/.mia-code/**` and the
    /// default global config files are always added.
    pub private: Vec<String>,
}

/// Source label of session override rules.
pub const SESSION_SOURCE: &str = "session";
/// Source label of "always for this project" approvals.
pub const APPROVAL_SOURCE: &str = "project approval";

/// A rule position, for lint and `permissions show`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RulePos {
    /// Position in the compiled list (checked top to bottom, zero-based).
    pub position: usize,
    pub layer: Layer,
    pub source: String,
    /// Position in its source list (zero-based).
    pub index: usize,
    pub rule: PermissionRule,
}

/// A rule that can never match because an earlier rule matches everything it would.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LintWarning {
    pub shadowed: RulePos,
    pub by: RulePos,
    pub message: String,
}

/// A project rule dropped because the workspace is not trusted yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IgnoredRule {
    pub source: String,
    pub index: usize,
    pub rule: PermissionRule,
    pub reason: String,
}

/// The compiled ruleset of one agent.
#[derive(Debug, Clone)]
pub struct Policy {
    pub agent: String,
    rules: Vec<CompiledRule>,
    /// Positions of rules by exact permission name.
    by_permission: HashMap<String, Vec<usize>>,
    /// Positions of rules whose permission is `*` or a glob.
    wildcard: Vec<usize>,
    pub errors: Vec<RuleError>,
    pub ignored: Vec<IgnoredRule>,
    pub lint: Vec<LintWarning>,
    /// The home directory the patterns were expanded with.
    pub home: Option<String>,
}

impl Policy {
    /// Compile the layered ruleset in the documented order (see the crate docs).
    /// Invalid rules do not abort compilation: they are listed in `errors` and
    /// disable the permission they name.
    pub fn compile(input: &PolicyInput) -> Self {
        let home = input.home.as_deref();
        let mut p = Policy {
            agent: input.agent.clone(),
            rules: Vec::new(),
            by_permission: HashMap::new(),
            wildcard: Vec::new(),
            errors: Vec::new(),
            ignored: Vec::new(),
            lint: Vec::new(),
            home: input.home.clone(),
        };
        let builtin = agents::builtin_agent(&input.agent).unwrap_or_default();
        let mut invariants = agents::invariant_rules();
        for pat in &input.extra_protected {
            for perm in ["write", "edit"] {
                invariants.push(PermissionRule {
                    permission: perm.into(),
                    pattern: Some(pat.clone()),
                    action: PermissionAction::Ask,
                });
            }
        }
        let mut secrets: Vec<String> = agents::SECRET_FILES.iter().map(|s| s.to_string()).collect();
        secrets.extend(input.secrets.iter().cloned());
        for pat in secrets {
            for perm in ["read", "grep", "glob", "list"] {
                invariants.push(PermissionRule {
                    permission: perm.into(),
                    pattern: Some(pat.clone()),
                    action: PermissionAction::Deny,
                });
            }
        }
        let mut private: Vec<String> = agents::PRIVATE_FILES
            .iter()
            .map(|s| s.to_string())
            .collect();
        private.extend(input.private.iter().cloned());
        for pat in private {
            for perm in ["read", "grep", "glob"] {
                invariants.push(PermissionRule {
                    permission: perm.into(),
                    pattern: Some(pat.clone()),
                    action: PermissionAction::Ask,
                });
            }
        }
        p.push_list(Layer::Invariant, BUILT_IN, &invariants, home, false);
        // The agent's built-in restrictions (plan's read-only set) are a
        // floor right under the invariants: no answer, approval or config
        // layer below can lift them.
        p.push_list(
            Layer::AgentRestriction,
            BUILT_IN,
            &builtin.restrictions,
            home,
            false,
        );
        p.push_list(Layer::Session, SESSION_SOURCE, &input.session, home, false);
        p.push_list(
            Layer::ProjectApproval,
            APPROVAL_SOURCE,
            &input.project_approvals,
            home,
            false,
        );
        let untrusted = !input.workspace_trusted;
        for l in input.agent_project.iter() {
            p.push_list(Layer::Agent, &l.source, &l.rules, home, untrusted);
        }
        for l in input.agent_global.iter() {
            p.push_list(Layer::Agent, &l.source, &l.rules, home, false);
        }
        for l in input.project.iter() {
            p.push_list(Layer::Project, &l.source, &l.rules, home, untrusted);
        }
        for l in input.global.iter() {
            p.push_list(Layer::Global, &l.source, &l.rules, home, false);
        }
        p.push_list(
            Layer::SafeDefault,
            BUILT_IN,
            &agents::safe_default_rules(),
            home,
            false,
        );
        p.push_list(Layer::AgentGrant, BUILT_IN, &builtin.grants, home, false);
        p.push_list(
            Layer::Default,
            BUILT_IN,
            &agents::default_rules(),
            home,
            false,
        );
        p.lint = lint(&p.rules);
        for (i, r) in p.rules.iter().enumerate() {
            match r.exact_permission() {
                Some(name) => p.by_permission.entry(name.to_string()).or_default().push(i),
                None => p.wildcard.push(i),
            }
        }
        p
    }

    fn push_list(
        &mut self,
        layer: Layer,
        source: &str,
        rules: &[PermissionRule],
        home: Option<&str>,
        only_tighten: bool,
    ) {
        for (i, rule) in rules.iter().enumerate() {
            // Built-in `~/` patterns cannot be expressed without a home directory;
            // their component-pattern siblings (`.ssh`, `.bashrc`, ...) still apply.
            if home.is_none()
                && source == BUILT_IN
                && rule.pattern.as_deref().is_some_and(|p| p.starts_with("~/"))
            {
                continue;
            }
            if only_tighten && rule.action == PermissionAction::Allow {
                self.ignored.push(IgnoredRule {
                    source: source.to_string(),
                    index: i,
                    rule: rule.clone(),
                    reason: "project config may only deny or ask until you trust this workspace"
                        .into(),
                });
                continue;
            }
            match CompiledRule::compile(rule.clone(), layer, source, i, home) {
                Ok(c) => self.rules.push(c),
                Err(e) => self.errors.push(e),
            }
        }
    }

    /// The compiled rules, in checking order.
    pub fn rules(&self) -> &[CompiledRule] {
        &self.rules
    }

    /// First rule that matches, with its position. Pure.
    ///
    /// Invariants are a floor, not an exit: when an invariant (ask) matches,
    /// the rest of the list is still consulted and a deny found there wins, so
    /// an invariant can never relax a stricter rule (plan still denies writes
    /// to `.mia-code.json`).
    pub fn first_match(
        &self,
        permission: &str,
        input: MatchInput<'_>,
    ) -> Option<(usize, &CompiledRule)> {
        let exact: &[usize] = self
            .by_permission
            .get(permission)
            .map_or(&[], Vec::as_slice);
        // Candidates in checking order: merge the exact-name and wildcard position lists.
        let mut candidates = Merge {
            a: exact,
            b: &self.wildcard,
        };
        let mut found = None;
        for pos in candidates.by_ref() {
            let r = &self.rules[pos];
            let hit = match r.exact_permission() {
                Some(_) => r.matches_input(input),
                None => r.matches(permission, input),
            };
            if hit {
                found = Some((pos, r));
                break;
            }
        }
        let first = found?;
        if !first.1.layer.is_floor() {
            return Some(first);
        }
        // A floor layer (invariants, safe defaults) never relaxes: the next
        // match below it still applies when it is stricter.
        let mut best = first;
        let mut floor_seen = vec![first.1.layer];
        for pos in candidates {
            let r = &self.rules[pos];
            if floor_seen.contains(&r.layer) || !r.matches(permission, input) {
                continue;
            }
            if r.action() > best.1.action() {
                best = (pos, r);
            }
            if r.layer.is_floor() {
                floor_seen.push(r.layer);
            } else {
                break;
            }
        }
        Some(best)
    }

    /// The most permissive decision any target of `permission` could get
    /// (`None` when no rule decides for every target: the no-match default
    /// applies then). Used to decide whether to offer a tool at all: a bare
    /// `check` with no target only sees pattern-less rules.
    pub fn availability(&self, permission: &str) -> (PermissionAction, bool) {
        let mut best: Option<PermissionAction> = None;
        for r in &self.rules {
            if !r.matches_permission(permission) || r.layer.is_floor() {
                continue;
            }
            let a = r.action();
            best = Some(best.map_or(a, |b| b.min(a)));
            if r.matches_every_target() {
                return (best.unwrap_or(a), true);
            }
        }
        (
            best.map_or(PermissionAction::Ask, |b| b.min(PermissionAction::Ask)),
            false,
        )
    }

    /// Could a rule that denies or asks for reads match something at or
    /// below the absolute directory `dir`? Readers of many files (grep,
    /// glob, `grep -r`) judge each file only then.
    pub fn read_restricted_under(&self, dir: &str) -> bool {
        for r in &self.rules {
            if !r.matches_permission("read") {
                continue;
            }
            if r.action() != PermissionAction::Allow {
                if r.reaches_under(dir) {
                    return true;
                }
            } else if r.matches_every_target() && !r.layer.is_floor() {
                // Nothing below an unconditional allow can decide a read.
                return false;
            }
        }
        false
    }

    /// Could a read rule other than the built-in ones for credential stores
    /// and mia-code's secrets (which the OS sandbox hides from commands)
    /// refuse or ask for some file?
    pub fn read_restricted_beyond_hidden(&self) -> bool {
        for r in &self.rules {
            if !r.matches_permission("read") {
                continue;
            }
            if r.action() != PermissionAction::Allow {
                if matches!(r.layer, Layer::SafeDefault | Layer::Invariant) {
                    continue;
                }
                return true;
            } else if r.matches_every_target() && !r.layer.is_floor() {
                return false;
            }
        }
        false
    }

    /// An invalid rule that disables `permission`, if any.
    pub fn disabled_by(&self, permission: &str) -> Option<&RuleError> {
        self.errors.iter().find(|e| {
            // An invalid rule whose permission cannot be read (empty, bad glob) disables everything.
            e.permission.trim().is_empty()
                || e.permission == "*"
                || e.permission == permission
                || e.permission.contains(['*', '?', '[', '{'])
        })
    }

    /// Positions of the compiled rules, for display.
    pub fn positions(&self) -> Vec<RulePos> {
        self.rules
            .iter()
            .enumerate()
            .map(|(i, r)| pos(i, r))
            .collect()
    }

    /// Human-readable compiled ruleset (`mia-code permissions show`).
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Permission rules for agent `{}` (checked top to bottom; the first match wins):",
            self.agent
        );
        let mut last_layer = None;
        for (i, r) in self.rules.iter().enumerate() {
            if last_layer != Some(r.layer) {
                let _ = writeln!(s, "  [{}]", r.layer);
                last_layer = Some(r.layer);
            }
            let _ = writeln!(
                s,
                "  {:>3}. {:<40} from {} #{}",
                i + 1,
                r.rule.to_string(),
                r.source,
                r.source_index + 1
            );
        }
        let _ = writeln!(
            s,
            "  [no match] ask when a person can answer, deny otherwise"
        );
        for w in &self.lint {
            let _ = writeln!(s, "warning: {}", w.message);
        }
        for ig in &self.ignored {
            let _ = writeln!(
                s,
                "ignored: {} from {} #{}: {}",
                ig.rule,
                ig.source,
                ig.index + 1,
                ig.reason
            );
        }
        for e in &self.errors {
            let _ = writeln!(s, "error: {e}");
        }
        s
    }
}

fn pos(i: usize, r: &CompiledRule) -> RulePos {
    RulePos {
        position: i,
        layer: r.layer,
        source: r.source.clone(),
        index: r.source_index,
        rule: r.rule.clone(),
    }
}

fn lint(rules: &[CompiledRule]) -> Vec<LintWarning> {
    let mut out = Vec::new();
    for (j, later) in rules.iter().enumerate() {
        if !later.layer.is_user() {
            continue;
        }
        if let Some((i, earlier)) = rules[..j].iter().enumerate().find(|(_, e)| e.covers(later)) {
            out.push(LintWarning {
                message: format!(
                    "rule #{} `{}` from {} can never match: rule #{} `{}` from {} ({} layer, checked earlier at position {}) matches everything it would (shown position {})",
                    later.source_index + 1,
                    later.rule,
                    later.source,
                    earlier.source_index + 1,
                    earlier.rule,
                    earlier.source,
                    earlier.layer,
                    i + 1,
                    j + 1
                ),
                shadowed: pos(j, later),
                by: pos(i, earlier),
            });
        }
    }
    out
}

/// Merge two ascending position lists.
struct Merge<'a> {
    a: &'a [usize],
    b: &'a [usize],
}

impl Iterator for Merge<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        let take_a = match (self.a.first(), self.b.first()) {
            (Some(x), Some(y)) => x < y,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let (head, rest) = if take_a {
            self.a.split_first()?
        } else {
            self.b.split_first()?
        };
        if take_a {
            self.a = rest;
        } else {
            self.b = rest;
        }
        Some(*head)
    }
}
