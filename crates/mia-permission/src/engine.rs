//! The evaluator: judges one request against a compiled [`Policy`] (and the
//! parent agent's policy for subagents). Pure apart from the injected
//! [`PathResolver`], which produces canonical paths.

use std::fmt::Write as _;

use mia_protocol::{PermissionAction, PermissionRule};
use serde::Serialize;

use crate::bash::{self, Opaque, Segment};
use crate::commands;
use crate::path::{CanonicalPath, PathResolver};
use crate::policy::Policy;
use crate::readonly;
use crate::rules::{Layer, MatchInput, PathForm, UrlForm};

use PermissionAction::{Allow, Ask, Deny};

/// What a request acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    None,
    /// A file path as given by the tool (relative to the project root, absolute or `~/`).
    Path(String),
    /// A shell command line.
    Command(String),
    Url(String),
    /// Any other pattern subject (e.g. a subagent name for `task`).
    Text(String),
}

/// One permission check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub permission: String,
    pub target: Target,
}

impl Request {
    pub fn path(permission: &str, path: &str) -> Self {
        Self {
            permission: permission.into(),
            target: Target::Path(path.into()),
        }
    }
    pub fn command(cmd: &str) -> Self {
        Self {
            permission: "bash".into(),
            target: Target::Command(cmd.into()),
        }
    }
    pub fn url(permission: &str, url: &str) -> Self {
        Self {
            permission: permission.into(),
            target: Target::Url(url.into()),
        }
    }
    pub fn bare(permission: &str) -> Self {
        Self {
            permission: permission.into(),
            target: Target::None,
        }
    }
    /// A request whose target kind follows from the permission: `bash` takes a
    /// command, `fetch`/`web_fetch` a URL, `question`/`plan_*`/`todo_*`/`task`/`skill`
    /// plain text, every other permission (read, write, edit, glob, grep, list,
    /// external_directory, unknown tool ids) a path.
    pub fn infer(permission: &str, subject: Option<&str>) -> Self {
        let target = match subject {
            None => Target::None,
            Some(s) => match permission {
                "bash" => Target::Command(s.into()),
                "fetch" | "web_fetch" | "webfetch" => Target::Url(s.into()),
                p if matches!(
                    p,
                    "question" | "plan_enter" | "plan_exit" | "task" | "skill" | "sandbox_escape"
                ) || p.starts_with("todo_") =>
                {
                    Target::Text(s.into())
                }
                _ => Target::Path(s.into()),
            },
        };
        Self {
            permission: permission.into(),
            target,
        }
    }

    /// The target as one display string.
    pub fn target_display(&self) -> String {
        match &self.target {
            Target::None => String::new(),
            Target::Path(s) | Target::Command(s) | Target::Url(s) | Target::Text(s) => s.clone(),
        }
    }
}

/// The rule that decided, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Matched {
    pub rule: PermissionRule,
    pub layer: Layer,
    pub source: String,
    /// Position in its source list (zero-based).
    pub index: usize,
    /// Position in the compiled list (zero-based).
    pub position: usize,
    /// The agent whose ruleset it is (differs from the checked agent for a parent's rule).
    pub agent: String,
}

impl Matched {
    /// `deny write *.lock from .mia-code.json`
    pub fn describe(&self) -> String {
        format!("{} from {}", self.rule, self.source)
    }
}

/// One elementary check made while judging a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubCheck {
    pub permission: String,
    pub target: String,
    pub decision: PermissionAction,
    pub matched: Option<Matched>,
    pub reason: String,
}

/// The verdict on one shell segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentDecision {
    pub command: String,
    pub decision: PermissionAction,
    pub matched: Option<Matched>,
    pub reason: String,
    pub opaque: Vec<Opaque>,
    pub via: Vec<String>,
    pub checks: Vec<SubCheck>,
}

/// The verdict on a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub permission: String,
    pub target: String,
    pub decision: PermissionAction,
    pub reason: String,
    pub matched: Option<Matched>,
    pub segments: Vec<SegmentDecision>,
    pub checks: Vec<SubCheck>,
    /// Rules an "always" answer would add (empty: "always" is not offered).
    pub always: Vec<PermissionRule>,
    /// An ask nobody could answer (headless, no route), denied for that:
    /// `always` held what a person could have answered "always" with.
    pub unanswered: Option<Vec<PermissionRule>>,
}

impl Decision {
    pub fn is_allowed(&self) -> bool {
        self.decision == Allow
    }

    /// The message the model receives when denied (spec 074 form).
    pub fn denial_message(&self) -> Option<String> {
        (self.decision == Deny).then(|| self.reason.clone())
    }

    /// The stable JSON shape of `mia-code permissions check --json`.
    pub fn to_check_json(&self) -> serde_json::Value {
        let m = |m: &Option<Matched>| match m {
            Some(m) => {
                serde_json::json!({"rule": m.rule, "layer": m.layer.as_str(), "source": m.source})
            }
            None => serde_json::Value::Null,
        };
        serde_json::json!({
            "decision": self.decision.as_str(),
            "reason": self.reason,
            "matched": m(&self.matched),
            "segments": self.segments.iter().map(|s| serde_json::json!({
                "command": s.command,
                "decision": s.decision.as_str(),
                "matched": m(&s.matched),
            })).collect::<Vec<_>>(),
        })
    }

    /// A multi-line explanation for people (`mia-code permissions explain`).
    pub fn explain(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {} {}",
            self.decision.as_str().to_uppercase(),
            self.permission,
            self.target
        );
        let _ = writeln!(s, "  reason: {}", self.reason);
        match &self.matched {
            Some(m) => {
                let _ = writeln!(
                    s,
                    "  decided by: `{}` ({} layer, {} rule #{}, position {} in agent `{}`'s compiled list)",
                    m.rule,
                    m.layer,
                    m.source,
                    m.index + 1,
                    m.position + 1,
                    m.agent
                );
            }
            None => {
                let _ = writeln!(s, "  decided by: no rule");
            }
        }
        for seg in &self.segments {
            let _ = writeln!(
                s,
                "  segment `{}`: {} — {}",
                seg.command, seg.decision, seg.reason
            );
            if !seg.via.is_empty() {
                let _ = writeln!(s, "    unwrapped from: {}", seg.via.join(" → "));
            }
            for c in &seg.checks {
                let _ = writeln!(
                    s,
                    "    {} {}: {} — {}",
                    c.permission, c.target, c.decision, c.reason
                );
            }
        }
        for c in &self.checks {
            let _ = writeln!(
                s,
                "  {} {}: {} — {}",
                c.permission, c.target, c.decision, c.reason
            );
        }
        if !self.always.is_empty() {
            let rules: Vec<String> = self.always.iter().map(|r| r.to_string()).collect();
            let _ = writeln!(s, "  \"always\" would add: {}", rules.join(", "));
        }
        s
    }
}

/// The sub-checks of one request. For commands too long to be auto-allowed,
/// allowed sub-checks are not recorded (only what asks or denies is kept).
struct Checks {
    list: Vec<SubCheck>,
    quiet: bool,
}

impl Checks {
    fn new(quiet: bool) -> Self {
        Self {
            list: Vec::new(),
            quiet,
        }
    }

    fn record(&mut self, permission: &str, target: &str, s: &Sub) {
        if self.quiet && s.action == Allow {
            return;
        }
        self.list.push(SubCheck {
            permission: permission.into(),
            target: target.into(),
            decision: s.action,
            matched: s.matched.clone(),
            reason: s.reason.clone(),
        });
    }
}

/// Canonical paths resolved while judging one command line (`(base, raw)` → result).
type PathCache = std::collections::HashMap<
    (Option<String>, String),
    Result<CanonicalPath, crate::error::PathError>,
>;

/// Who can answer an ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answerer {
    /// A person is there to answer.
    Person,
    /// Headless run: nobody can answer, asks become denials.
    Headless,
    /// Background subagent with no route to the user.
    NoRoute,
    /// The ask timed out.
    TimedOut,
}

impl Answerer {
    fn why(self) -> &'static str {
        match self {
            Self::Person => "",
            Self::Headless => "nobody can answer in a headless run",
            Self::NoRoute => "this background subagent has no route to the user",
            Self::TimedOut => "the question timed out",
        }
    }
}

/// Judges requests for one agent.
pub struct Checker<'a> {
    policy: &'a Policy,
    /// The ancestors' policies (a subagent's parent, its parent's parent, ...).
    parents: Vec<&'a Policy>,
    resolver: &'a dyn PathResolver,
    answerer: Answerer,
    /// Shell commands run in the OS sandbox (writes confined, credential
    /// stores and mia-code's secrets hidden).
    sandboxed_shell: bool,
    /// Shell commands run in the weaker fallback sandbox (Landlock), which
    /// cannot hold every promise: commands that run code the engine cannot
    /// read need a rule naming them.
    weak_sandbox: bool,
    /// What the shell tool's commands are written in.
    dialect: bash::ShellDialect,
}

struct Sub {
    action: PermissionAction,
    matched: Option<Matched>,
    reason: String,
}

fn verb(permission: &str) -> String {
    match permission {
        "read" => "read".into(),
        "write" => "write to".into(),
        "edit" => "edit".into(),
        "bash" => "run".into(),
        "fetch" | "web_fetch" | "webfetch" => "fetch".into(),
        "external_directory" => "access outside the project".into(),
        "glob" | "grep" | "list" => format!("{permission} in"),
        p => format!("use {p} on"),
    }
}

fn stricter(a: &Sub, b: &Sub) -> bool {
    b.action > a.action
}

fn escape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl<'a> Checker<'a> {
    pub fn new(policy: &'a Policy, resolver: &'a dyn PathResolver) -> Self {
        Self {
            policy,
            parents: Vec::new(),
            resolver,
            answerer: Answerer::Person,
            sandboxed_shell: false,
            weak_sandbox: false,
            dialect: bash::ShellDialect::Posix,
        }
    }

    /// The shell the commands run in. With [`bash::ShellDialect::PowerShell`]
    /// plain PowerShell is read ([`crate::powershell`]); anything it would
    /// evaluate asks (or is denied by a deny rule matching its words).
    pub fn with_shell_dialect(mut self, dialect: bash::ShellDialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// Shell commands run in the OS sandbox, which confines their writes and
    /// hides the credential stores and mia-code's secrets: a command the
    /// rules allow needs no confirmation just because its words are not
    /// plain (expansions, substitutions, loops, redirections, heredocs),
    /// unless it is destructive or privileged, the parser could not read
    /// it, or a read rule of your own restricts files it could reach.
    pub fn with_sandboxed_shell(mut self, sandboxed: bool) -> Self {
        self.sandboxed_shell = sandboxed;
        self
    }

    /// Shell commands run in the fallback sandbox (Landlock, no user
    /// namespaces): a blanket allow no longer covers commands that run code
    /// the engine cannot read (`python3 x.py`, `make`, `npm test`): they ask
    /// unless a rule names them.
    pub fn with_weak_sandbox(mut self, weak: bool) -> Self {
        self.weak_sandbox = weak;
        self
    }

    /// May the sandbox stand in for plain words in this segment?
    fn sandbox_covers(&self, seg: &Segment) -> bool {
        use crate::bash::Opaque as O;
        // A bare assignment (`OUT=x`) runs no program.
        let runs_nothing =
            seg.words.is_empty() || (seg.words.len() == 1 && seg.opaque == [O::Assignment]);
        // An interpreter's inline code runs in the sandbox exactly like a
        // script file would: `python3 -c CODE` is judged as `python3 FILE`.
        self.sandboxed_shell
            && (runs_nothing
                || (seg.is_literal(0)
                    && !readonly::is_destructive_or_privileged_beyond_code(&seg.words)))
            && seg.opaque.iter().all(|o| {
                matches!(
                    o,
                    O::CommandSubstitution
                        | O::ProcessSubstitution
                        | O::VariableExpansion
                        | O::ArithmeticExpansion
                        | O::AnsiCString
                        | O::GlobPattern
                        | O::Assignment
                        | O::Redirection
                        | O::Heredoc
                        | O::Subshell
                        | O::ControlFlow
                        | O::DynamicArguments
                        | O::HiddenCode
                        | O::ChangesDirectory
                )
            })
            && !self.policy.read_restricted_beyond_hidden()
            && !self
                .parents
                .iter()
                .any(|p| p.read_restricted_beyond_hidden())
    }

    /// A subagent: its effective rules are the intersection of its own and
    /// every ancestor's (call once per ancestor, nearest first).
    pub fn with_parent(mut self, parent: &'a Policy) -> Self {
        self.parents.push(parent);
        self
    }

    pub fn with_answerer(mut self, a: Answerer) -> Self {
        self.answerer = a;
        self
    }

    /// First-match evaluation of one (permission, input) in one policy.
    fn eval_policy(
        &self,
        policy: &Policy,
        permission: &str,
        input: MatchInput<'_>,
        what: &str,
        quiet: bool,
    ) -> Sub {
        if let Some(e) = policy.disabled_by(permission) {
            return Sub {
                action: Deny,
                matched: None,
                reason: format!(
                    "Permission denied: `{permission}` is disabled by an invalid rule: {e}"
                ),
            };
        }
        match policy.first_match(permission, input) {
            Some((position, r)) => {
                let matched = Matched {
                    rule: r.rule.clone(),
                    layer: r.layer,
                    source: r.source.clone(),
                    index: r.source_index,
                    position,
                    agent: policy.agent.clone(),
                };
                if quiet && r.action() == Allow {
                    return Sub {
                        action: Allow,
                        matched: Some(matched),
                        reason: String::new(),
                    };
                }
                let act = if what.is_empty() {
                    format!("use {permission}")
                } else {
                    format!("{} {}", verb(permission), what)
                };
                let m = matched.describe();
                let reason = match r.action() {
                    Deny => format!("Permission denied: cannot {act} (matched rule: {m})"),
                    Ask => format!("Needs confirmation to {act} (matched rule: {m})"),
                    Allow => format!("Allowed to {act} (matched rule: {m})"),
                };
                Sub {
                    action: r.action(),
                    matched: Some(matched),
                    reason,
                }
            }
            None => Sub {
                action: Ask,
                matched: None,
                reason: format!(
                    "No rule for agent `{}` matches {}{}{}: asking",
                    policy.agent,
                    permission,
                    if what.is_empty() { "" } else { " " },
                    what
                ),
            },
        }
    }

    /// Evaluate in the own policy and (for subagents) every ancestor's; strictest wins.
    fn eval(&self, permission: &str, input: MatchInput<'_>, what: &str, quiet: bool) -> Sub {
        let mut best = self.eval_policy(self.policy, permission, input, what, quiet);
        for p in &self.parents {
            let par = self.eval_policy(p, permission, input, what, quiet);
            if stricter(&best, &par) {
                best = Sub {
                    reason: format!("{} (parent agent `{}`)", par.reason, p.agent),
                    ..par
                };
            }
        }
        best
    }

    fn eval_path(&self, permission: &str, cp: &CanonicalPath, checks: &mut Checks) -> Sub {
        let what = cp.display();
        let mut best: Option<Sub> = None;
        for form in cp.forms() {
            let label = if cp.forms().len() > 1 && std::ptr::eq(form, &cp.real) {
                format!("{what} (real path {})", form.abs)
            } else {
                what.clone()
            };
            let s = self.eval(permission, MatchInput::Path(form), &label, checks.quiet);
            if best.as_ref().is_none_or(|b| stricter(b, &s)) {
                best = Some(s);
            }
        }
        let mut out = best.unwrap_or(Sub {
            action: Deny,
            matched: None,
            reason: "no path form".into(),
        });
        checks.record(permission, &what, &out);
        if cp.outside_project() {
            let outside: Vec<&PathForm> =
                cp.forms().into_iter().filter(|f| f.rel.is_none()).collect();
            for form in outside {
                let s = self.eval(
                    "external_directory",
                    MatchInput::Path(form),
                    &form.abs,
                    checks.quiet,
                );
                // Writes outside the project ask unless a rule of your own
                // (config or an answer) allows `external_directory` there:
                // a broad built-in grant (build's `allow *`) does not.
                let s = if matches!(permission, "write" | "edit")
                    && s.action == Allow
                    && s.matched.as_ref().is_none_or(|m| !m.layer.is_user())
                {
                    Sub {
                        action: Ask,
                        reason: format!(
                            "Needs confirmation to write outside the project: {} (allow it with an `external_directory` rule)",
                            form.abs
                        ),
                        matched: s.matched,
                    }
                } else {
                    s
                };
                checks.record("external_directory", &form.abs, &s);
                if stricter(&out, &s) {
                    out = s;
                }
            }
        }
        out
    }

    fn path_sub(
        &self,
        permission: &str,
        raw: &str,
        base: Option<&str>,
        checks: &mut Checks,
        fail: PermissionAction,
    ) -> (Sub, Option<CanonicalPath>) {
        match self.resolver.resolve(raw, base) {
            Ok(cp) => (self.eval_path(permission, &cp, checks), Some(cp)),
            Err(e) => {
                let s = Sub {
                    action: fail,
                    matched: None,
                    reason: format!(
                        "Permission {}: cannot check path: {e}",
                        if fail == Deny {
                            "denied"
                        } else {
                            "needs confirmation"
                        }
                    ),
                };
                checks.record(permission, raw, &s);
                (s, None)
            }
        }
    }

    /// Resolve once, judge for several permissions (shell arguments).
    fn path_subs(
        &self,
        perms: &[&str],
        raw: &str,
        base: Option<&str>,
        checks: &mut Checks,
        cache: &mut PathCache,
    ) -> Vec<Sub> {
        let key = (base.map(str::to_string), raw.to_string());
        let resolved = cache
            .entry(key)
            .or_insert_with(|| self.resolver.resolve(raw, base));
        match resolved {
            Ok(cp) => perms
                .iter()
                .map(|p| self.eval_path(p, cp, checks))
                .collect(),
            Err(e) => perms
                .iter()
                .map(|p| {
                    let s = Sub {
                        action: Ask,
                        matched: None,
                        reason: format!("Permission needs confirmation: cannot check path: {e}"),
                    };
                    checks.record(p, raw, &s);
                    s
                })
                .collect(),
        }
    }

    /// The most permissive decision any target of `permission` could get for
    /// this agent (and its parent): `Deny` means the tool is unusable and need
    /// not be offered. Unlike `check(&Request::bare(..))`, rules with patterns
    /// count (plan's bash is available for read-only commands).
    pub fn availability(&self, permission: &str) -> PermissionAction {
        let one = |p: &Policy| {
            if p.disabled_by(permission).is_some() {
                return Deny;
            }
            p.availability(permission).0
        };
        let mut a = one(self.policy);
        for parent in &self.parents {
            a = a.max(one(parent));
        }
        if a == Ask && self.answerer != Answerer::Person {
            Deny
        } else {
            a
        }
    }

    /// Judge one request.
    pub fn check(&self, req: &Request) -> Decision {
        let mut d = match &req.target {
            Target::Path(raw) => self.check_path(req, raw),
            Target::Command(cmd) => self.check_command(req, cmd),
            Target::Url(u) => self.check_url(req, u),
            Target::Text(t) => self.simple(req, MatchInput::Text(t), t),
            Target::None => self.simple(req, MatchInput::Nothing, ""),
        };
        if d.decision == Ask && self.answerer != Answerer::Person {
            d.decision = Deny;
            d.reason = format!(
                "Permission denied: {}, so this ask is denied ({})",
                self.answerer.why(),
                d.reason
            );
            d.unanswered = Some(std::mem::take(&mut d.always));
        }
        if self.answerer != Answerer::Person {
            for s in &mut d.segments {
                if s.decision == Ask {
                    s.decision = Deny;
                    s.reason = format!("{} — {}", s.reason, self.answerer.why());
                }
            }
        }
        d
    }

    fn decision(req: &Request, s: Sub) -> Decision {
        Decision {
            permission: req.permission.clone(),
            target: req.target_display(),
            decision: s.action,
            reason: s.reason,
            matched: s.matched,
            segments: vec![],
            checks: vec![],
            always: vec![],
            unanswered: None,
        }
    }

    fn simple(&self, req: &Request, input: MatchInput<'_>, what: &str) -> Decision {
        let s = self.eval(&req.permission, input, what, false);
        let always = if s.action == Ask {
            vec![PermissionRule {
                permission: req.permission.clone(),
                pattern: (!what.is_empty()).then(|| escape_glob(what)),
                action: Allow,
            }]
        } else {
            vec![]
        };
        Decision {
            always,
            unanswered: None,
            ..Self::decision(req, s)
        }
    }

    fn check_path(&self, req: &Request, raw: &str) -> Decision {
        let mut checks = Checks::new(false);
        let (s, cp) = self.path_sub(&req.permission, raw, None, &mut checks, Deny);
        let checks = checks.list;
        let mut always = Vec::new();
        if s.action == Ask
            && let Some(cp) = cp
        {
            // Only offer "always" when no invariant is what asks.
            if !checks.iter().any(|c| {
                c.decision == Ask
                    && c.matched
                        .as_ref()
                        .is_some_and(|m| m.layer == Layer::Invariant)
            }) {
                for c in checks.iter().filter(|c| c.decision == Ask) {
                    let pattern = if c.permission == "external_directory" {
                        escape_glob(&c.target)
                    } else {
                        match &cp.spelled.rel {
                            Some(r) => format!("./{}", escape_glob(r)),
                            None => escape_glob(&cp.spelled.abs),
                        }
                    };
                    always.push(PermissionRule {
                        permission: c.permission.clone(),
                        pattern: Some(pattern),
                        action: Allow,
                    });
                }
            }
        }
        Decision {
            checks,
            always,
            unanswered: None,
            ..Self::decision(req, s)
        }
    }

    fn check_url(&self, req: &Request, raw: &str) -> Decision {
        if let Ok(u) = url::Url::parse(raw)
            && !matches!(u.scheme(), "http" | "https")
        {
            return Self::decision(
                req,
                Sub {
                    action: Deny,
                    matched: None,
                    reason: format!(
                        "Permission denied: cannot fetch {raw:?}: only http and https URLs can be fetched (not {}:)",
                        u.scheme()
                    ),
                },
            );
        }
        let mut checks = Checks::new(false);
        let s = self.url_sub(&req.permission, raw, &mut checks);
        let checks = checks.list;
        let always = if s.action == Ask && !opaque_url(raw) {
            url::Url::parse(raw)
                .ok()
                .and_then(|u| u.host_str().map(str::to_lowercase))
                .map(|h| {
                    vec![PermissionRule {
                        permission: req.permission.clone(),
                        pattern: Some(escape_glob(&h)),
                        action: Allow,
                    }]
                })
                .unwrap_or_default()
        } else {
            vec![]
        };
        Decision {
            checks,
            always,
            unanswered: None,
            ..Self::decision(req, s)
        }
    }

    fn url_sub(&self, permission: &str, raw: &str, checks: &mut Checks) -> Sub {
        let parsed = match url::Url::parse(raw) {
            Ok(u) => u,
            Err(e) => {
                let s = Sub {
                    action: Deny,
                    matched: None,
                    reason: format!(
                        "Permission denied: cannot {} {raw:?}: not a valid URL ({e})",
                        verb(permission)
                    ),
                };
                checks.record(permission, raw, &s);
                return s;
            }
        };
        let host = parsed.host_str().unwrap_or("").to_lowercase();
        let mut clean = parsed.clone();
        let _ = clean.set_username("");
        let _ = clean.set_password(None);
        clean.set_fragment(None);
        let form = UrlForm {
            full: clean.to_string(),
            host,
        };
        let mut s = self.eval(permission, MatchInput::Url(&form), &form.full, checks.quiet);
        let odd = if !parsed.username().is_empty() || parsed.password().is_some() {
            Some("the URL carries credentials (user@host)")
        } else if !matches!(parsed.scheme(), "http" | "https") {
            Some("only http and https URLs can be auto-allowed")
        } else {
            None
        };
        if let Some(why) = odd
            && s.action == Allow
        {
            s = Sub {
                action: Ask,
                reason: format!("Needs confirmation: {why}; {}", s.reason),
                matched: s.matched,
            };
        }
        checks.record(permission, &form.full, &s);
        s
    }

    fn check_command(&self, req: &Request, cmd: &str) -> Decision {
        let parsed = bash::parse_as(self.dialect, cmd);
        let mut cache = PathCache::new();
        let mut segs = Vec::with_capacity(parsed.segments.len());
        let mut worst: Option<(Sub, usize)> = None;
        let mut always: Vec<PermissionRule> = Vec::new();
        let mut always_ok = true;
        for (i, seg) in parsed.segments.iter().enumerate() {
            let quiet = cmd.len() > bash::MAX_AUTO_ALLOW_LEN;
            let (s, checks, from_rule_only, hosts, command_verdict) =
                self.judge_segment(&req.permission, seg, quiet, &mut cache);
            if s.action == Ask {
                if !from_rule_only {
                    always_ok = false;
                }
                if command_verdict == Ask {
                    let prefix = if seg.opaque.is_empty() && !readonly::is_dangerous(&seg.words) {
                        readonly::natural_prefix(&seg.words)
                    } else {
                        None
                    };
                    match prefix {
                        Some(p) => {
                            let r = PermissionRule {
                                permission: req.permission.clone(),
                                pattern: Some(p),
                                action: Allow,
                            };
                            if !always.contains(&r) {
                                always.push(r);
                            }
                        }
                        None => always_ok = false,
                    }
                }
                // The first fetch of a host: "always" allows that host.
                for h in hosts {
                    let r = PermissionRule {
                        permission: "fetch".into(),
                        pattern: Some(escape_glob(&h)),
                        action: Allow,
                    };
                    if !always.contains(&r) {
                        always.push(r);
                    }
                }
            }
            segs.push(SegmentDecision {
                command: seg.display(),
                decision: s.action,
                matched: s.matched.clone(),
                reason: s.reason.clone(),
                opaque: seg.opaque.clone(),
                via: seg.via.clone(),
                checks,
            });
            if worst.as_ref().is_none_or(|(w, _)| stricter(w, &s)) {
                worst = Some((s, i));
            }
        }
        let s = match worst {
            Some((s, _)) => s,
            None => Sub {
                action: Ask,
                matched: None,
                reason: "empty command".into(),
            },
        };
        let reason = if segs.len() > 1 {
            format!("{} [strictest of {} commands]", s.reason, segs.len())
        } else {
            s.reason.clone()
        };
        let always = if s.action == Ask && always_ok {
            always
        } else {
            vec![]
        };
        Decision {
            segments: segs,
            always,
            unanswered: None,
            reason,
            ..Self::decision(req, s)
        }
    }

    /// Returns (verdict, sub-checks, whether an ask came only from the
    /// command rule, hosts whose first fetch is what asks).
    fn judge_segment(
        &self,
        permission: &str,
        seg: &Segment,
        quiet: bool,
        cache: &mut PathCache,
    ) -> (Sub, Vec<SubCheck>, bool, Vec<String>, PermissionAction) {
        let what = seg.display();
        let label = format!("`{what}`");
        // Command identity: `/bin/rm` and `\rm` are `rm`; `git -C . push` and
        // `git --no-pager push` are `git push`. Rules see both spellings; the
        // stricter verdict stands.
        let norm = normalized_words(&seg.words);
        let mut s = self.eval(permission, MatchInput::Words(&seg.words), &label, quiet);
        if let Some(n) = &norm {
            let t = self.eval(permission, MatchInput::Words(n), &label, quiet);
            if stricter(&s, &t) {
                s = t;
            }
        }
        let words: &[String] = norm.as_deref().unwrap_or(&seg.words);
        // What the command does is read from all its words (git's global
        // options included), only the program's name normalised.
        let prog_words = program_normalized(&seg.words);
        let full: &[String] = prog_words.as_deref().unwrap_or(&seg.words);
        // Deny and ask rules naming a wrapper (`deny bash env *`) match the wrapper too.
        for w in &seg.wrappers {
            let wn = normalized_words(w);
            for form in std::iter::once(w.as_slice()).chain(wn.as_deref()) {
                let t = self.eval(permission, MatchInput::Words(form), &label, quiet);
                let user = t.matched.as_ref().is_some_and(|m| m.layer.is_user());
                if user && t.action != Allow && stricter(&s, &t) {
                    s = Sub {
                        reason: format!("{} (the wrapper `{}`)", t.reason, form.join(" ")),
                        ..t
                    };
                }
            }
        }
        // Other spellings of the same command (`npm --registry X publish` is
        // `npm publish`, `git send-pack` is `git push`): deny and ask rules
        // of yours match them too.
        for form in commands::deny_forms(full) {
            let t = self.eval(permission, MatchInput::Words(&form), &label, quiet);
            let user = t.matched.as_ref().is_some_and(|m| m.layer.is_user());
            if user && t.action != Allow && stricter(&s, &t) {
                s = Sub {
                    reason: format!("{} (read as `{}`)", t.reason, form.join(" ")),
                    ..t
                };
            }
        }
        if !seg.opaque.is_empty() && s.action == Allow && self.sandbox_covers(seg) {
            s.reason = format!(
                "{} (not plain words, but it runs in the OS sandbox)",
                s.reason
            );
        } else if !seg.opaque.is_empty() && s.action == Allow {
            let why: Vec<String> = seg.opaque.iter().map(|o| o.to_string()).collect();
            s = Sub {
                action: Ask,
                reason: format!(
                    "Needs confirmation: `{what}` cannot be auto-allowed ({}); the rule `{}` would allow plain words only",
                    why.join(", "),
                    s.matched.as_ref().map(|m| m.describe()).unwrap_or_default()
                ),
                matched: s.matched,
            };
        }
        let mut rule_only = true;
        // Stored secrets (keychain, secret service): never returned to an agent.
        if let Some(cmd) = commands::reads_secrets(words) {
            let t = Sub {
                action: Deny,
                matched: None,
                reason: format!(
                    "Permission denied: `{cmd}` prints stored secrets (keychain or credential store); no agent may read them"
                ),
            };
            rule_only = false;
            if stricter(&s, &t) {
                s = t;
            }
        }
        let analysis = commands::analyse(full);
        let net = commands::network(full);
        // Dangerous flags: an allow rule naming a command never covers its
        // execution or destruction flags; safe defaults (uploads, request
        // redirection) are covered only by a broad rule from your own
        // configuration or answers.
        if s.action == Allow {
            let by_command = self.allowed_by_command_rule(&s);
            let broad_user = s
                .matched
                .as_ref()
                .is_some_and(|m| m.layer.is_user() && !by_command);
            let mut flagged: Vec<String> = Vec::new();
            if by_command {
                flagged.extend(
                    analysis
                        .hazards
                        .iter()
                        .map(|h| format!("`{}` {}", h.flag, h.why)),
                );
            }
            if !broad_user && let Some(n) = &net {
                flagged.extend(
                    n.uploads
                        .iter()
                        .map(|f| format!("it uploads the local file `{f}`")),
                );
                flagged.extend(n.hazards.iter().map(|h| format!("`{}` {}", h.flag, h.why)));
            }
            if !flagged.is_empty() {
                rule_only = false;
                s = Sub {
                    action: Ask,
                    reason: format!(
                        "Needs confirmation: {} (the rule `{}` does not cover that)",
                        flagged.join("; "),
                        s.matched.as_ref().map(|m| m.describe()).unwrap_or_default()
                    ),
                    matched: s.matched,
                };
            }
        }
        // A command that has a process outside the sandbox run commands asks,
        // unless a rule names its subcommand.
        if s.action == Allow
            && let Some(why) = commands::runs_outside(full)
            && !self.names_subcommand(&s, full)
        {
            rule_only = false;
            s = Sub {
                action: Ask,
                reason: format!("Needs confirmation: {why}"),
                matched: s.matched,
            };
        }
        // Under the fallback sandbox, code the engine cannot read needs a rule
        // naming the command.
        if self.weak_sandbox
            && s.action == Allow
            && !self.allowed_by_command_rule(&s)
            && let Some(why) = commands::runs_unread_code(full)
        {
            rule_only = false;
            s = Sub {
                action: Ask,
                reason: format!(
                    "Needs confirmation: {why}, and the fallback sandbox (Landlock, no user namespaces) cannot hold everything (`mia-code doctor` says what)"
                ),
                matched: s.matched,
            };
        }
        let command_verdict = s.action;
        let mut checks = Checks::new(quiet);
        let base = seg.cwd.as_deref();
        let writer = readonly::writes_arguments(words);
        let destructive = words.first().is_some_and(|p| commands::is_destructive(p));
        let mut ask_hosts: Vec<String> = Vec::new();
        let fold = |s: &mut Sub, t: Sub, rule_only: &mut bool| {
            if t.action != Allow {
                *rule_only = false;
            }
            if stricter(s, &t) {
                *s = t;
            }
        };
        let mut operand_dirs: Vec<Option<CanonicalPath>> = Vec::new();
        let mut skip_positional = readonly::leading_non_path_args(words);
        let is_net = net.is_some() || words.first().is_some_and(|p| readonly::is_network(p));
        for (i, w) in seg.words.iter().enumerate().skip(1) {
            if !seg.is_literal(i) {
                continue;
            }
            if skip_positional > 0 && !w.starts_with('-') {
                skip_positional -= 1;
                continue;
            }
            if is_net && w.contains("://") {
                // judged below as a URL (with the client's own reading)
                if net.is_none() {
                    let t = self.url_sub("fetch", w, &mut checks);
                    fold(&mut s, t, &mut rule_only);
                }
                continue;
            }
            let Some(cand) = path_candidate(w) else {
                continue;
            };
            if net.is_some() && !w.starts_with('-') && !cand.starts_with(['/', '.', '~']) {
                // A network client's operands are URLs (scheme-less hosts too).
                continue;
            }
            let cand = proc_cwd(cand);
            let perms: &[&str] = if writer {
                &["read", "write"]
            } else {
                &["read"]
            };
            for t in self.path_subs(perms, &cand, base, &mut checks, cache) {
                fold(&mut s, t, &mut rule_only);
            }
            if !w.starts_with('-') {
                operand_dirs.push(
                    cache
                        .get(&(base.map(str::to_string), cand.clone()))
                        .and_then(|r| r.as_ref().ok().cloned()),
                );
            }
            if destructive
                && let Some(Ok(cp)) = cache.get(&(base.map(str::to_string), cand.clone()))
                && let Some(t) = self.destroys_root(words, cp)
            {
                checks.record("bash", &cp.display(), &t);
                fold(&mut s, t, &mut rule_only);
            }
        }
        // Files named by option values (`-o FILE`, `-f FILE`, `-f/etc/shadow`).
        let mut extra: Vec<(&str, String)> = Vec::new();
        extra.extend(analysis.reads.iter().map(|f| ("read", f.clone())));
        extra.extend(analysis.writes.iter().map(|f| ("write", f.clone())));
        extra.extend(
            commands::copy_targets(full)
                .into_iter()
                .map(|f| ("write", f)),
        );
        if let Some(n) = &net {
            extra.extend(n.reads.iter().map(|f| ("read", f.clone())));
            extra.extend(n.writes.iter().map(|f| ("write", f.clone())));
            extra.extend(n.uploads.iter().map(|f| ("read", f.clone())));
        }
        for (perm, f) in extra {
            let f = proc_cwd(f.strip_prefix('@').unwrap_or(&f));
            if f.is_empty() || f == "-" {
                continue;
            }
            for t in self.path_subs(&[perm], &f, base, &mut checks, cache) {
                fold(&mut s, t, &mut rule_only);
            }
        }
        if let Some(n) = &net {
            for u in &n.urls {
                let t = self.client_url_sub(u, &mut checks);
                if t.action == Ask
                    && t.matched
                        .as_ref()
                        .is_some_and(|m| m.layer == Layer::SafeDefault)
                    && let Some(h) = url::Url::parse(u)
                        .ok()
                        .and_then(|x| x.host_str().map(str::to_lowercase))
                    && !opaque_url(u)
                {
                    if !ask_hosts.contains(&h) {
                        ask_hosts.push(h);
                    }
                } else if t.action != Allow {
                    rule_only = false;
                }
                if stricter(&s, &t) {
                    s = t;
                }
            }
        }
        // Readers of whole trees (`grep -r`, `rg`, `git grep`, `diff -r`) and
        // names read at run time: while a read rule restricts a file they can
        // reach, they are not auto-allowed (they would return its content).
        if (analysis.recursive || analysis.names_at_runtime) && s.action == Allow {
            // Names read at run time can be any file; a tree reader with no
            // path operand reads from the command's directory.
            let reach: Vec<String> = if analysis.names_at_runtime {
                vec!["/".to_string()]
            } else if operand_dirs.is_empty() {
                vec![self.project_root_or(base)]
            } else {
                operand_dirs
                    .iter()
                    .map(|d| {
                        d.as_ref()
                            .map_or_else(|| "/".to_string(), |d| d.real.abs.clone())
                    })
                    .collect()
            };
            let restricted = reach.iter().any(|d| {
                self.policy.read_restricted_under(d)
                    || self.parents.iter().any(|p| p.read_restricted_under(d))
            });
            if restricted {
                rule_only = false;
                s = Sub {
                    action: Ask,
                    matched: s.matched,
                    reason: format!(
                        "Needs confirmation: `{what}` {} and a read rule restricts files it can reach (the grep and glob tools skip such files)",
                        if analysis.names_at_runtime {
                            "reads file names at run time"
                        } else {
                            "reads every file under its paths"
                        }
                    ),
                };
            }
        }
        for r in &seg.redirects {
            if !r.literal {
                continue;
            }
            let perm = if r.write { "write" } else { "read" };
            let target = proc_cwd(&r.target);
            let t = self
                .path_subs(&[perm], &target, base, &mut checks, cache)
                .into_iter()
                .next()
                .unwrap_or(Sub {
                    action: Ask,
                    matched: None,
                    reason: "no path check".into(),
                });
            fold(&mut s, t, &mut rule_only);
        }
        (s, checks.list, rule_only, ask_hosts, command_verdict)
    }

    /// Does the rule that allowed this name the program and its subcommand
    /// (`allow bash tmux send-keys *`)?
    fn names_subcommand(&self, s: &Sub, words: &[String]) -> bool {
        let (Some(m), Some(prog), Some(sub)) = (&s.matched, words.first(), words.get(1)) else {
            return false;
        };
        m.rule
            .pattern
            .as_deref()
            .is_some_and(|p| p.starts_with(&format!("{prog} {sub}")))
    }

    /// Was this allow given by a rule naming one command (`allow bash rg *`),
    /// including an "always" answer? Broad rules (build's `allow *`,
    /// `allow bash`) are not.
    fn allowed_by_command_rule(&self, s: &Sub) -> bool {
        let Some(m) = &s.matched else { return false };
        let policy = if m.agent == self.policy.agent {
            self.policy
        } else {
            self.parents
                .iter()
                .copied()
                .find(|p| p.agent == m.agent)
                .unwrap_or(self.policy)
        };
        policy
            .rules()
            .get(m.position)
            .is_some_and(|r| r.names_a_command())
    }

    /// `rm -rf .`, `rm -rf ~`, `chmod -R 000 /`: a destructive command aimed
    /// at the project root, the home directory or the file-system root asks,
    /// whatever allows it (and "always" is never offered for it).
    fn destroys_root(&self, words: &[String], cp: &CanonicalPath) -> Option<Sub> {
        let prog = words.first()?;
        let abs = cp.real.abs.trim_end_matches('/');
        let home = self.policy.home.as_deref().map(|h| {
            if crate::path::is_windows_path(h) {
                crate::path::windows_form(h)
                    .trim_end_matches('/')
                    .to_string()
            } else {
                h.trim_end_matches('/').to_string()
            }
        });
        // `C:/` (trimmed to `C:`) is a drive's root, as `/` is on Unix.
        let drive_root = abs.len() == 2 && abs.as_bytes()[1] == b':';
        let what = if cp.spelled.rel.as_deref() == Some("") || cp.real.rel.as_deref() == Some("") {
            "the project itself"
        } else if abs.is_empty() || abs == "/" || cp.real.abs == "/" || drive_root {
            "the file-system root"
        } else if home.as_deref() == Some(abs) {
            "your home directory"
        } else {
            return None;
        };
        Some(Sub {
            action: Ask,
            matched: None,
            reason: format!(
                "Needs confirmation: `{}` acts on {what} ({})",
                words.join(" "),
                prog
            ),
        })
    }

    fn project_root_or(&self, base: Option<&str>) -> String {
        match base.map(|b| self.resolver.resolve(b, None)) {
            Some(Ok(cp)) => cp.real.abs,
            _ => match self.resolver.resolve(".", None) {
                Ok(cp) => cp.real.abs,
                Err(_) => "/".into(),
            },
        }
    }

    /// A URL a network client will connect to, judged as `fetch`. The client's
    /// own reading matters: `https://a.example\@b.example/` connects to
    /// `b.example` in curl, so a backslash or a second `@` is never auto-allowed.
    fn client_url_sub(&self, raw: &str, checks: &mut Checks) -> Sub {
        let mut t = self.url_sub("fetch", raw, checks);
        if t.action == Allow && (raw.contains('\\') || raw.matches('@').count() > 1) {
            t = Sub {
                action: Ask,
                reason: format!(
                    "Needs confirmation: {raw:?} may reach a different host than it seems (the client reads `\\` and `@` differently); {}",
                    t.reason
                ),
                matched: t.matched,
            };
        }
        t
    }
}

/// The words as rules should also see them: the program's bare name for a
/// system path (`/usr/bin/git` → `git`), git's global options removed.
fn normalized_words(words: &[String]) -> Option<Vec<String>> {
    words.first()?;
    let renamed = program_normalized(words);
    let mut changed = renamed.is_some();
    let mut v = renamed.unwrap_or_else(|| words.to_vec());
    if v[0] == "git"
        && let Some(g) = commands::git_without_globals(&v)
    {
        v = g;
        changed = true;
    }
    changed.then_some(v)
}

/// The words with only the program's name normalised (`/usr/bin/git` → `git`).
fn program_normalized(words: &[String]) -> Option<Vec<String>> {
    let first = words.first()?;
    let p = commands::program_name(first)?;
    (p != first).then(|| {
        let mut v = words.to_vec();
        v[0] = p.to_string();
        v
    })
}

/// `/proc/self/cwd/x` is `x` relative to the command's directory.
fn proc_cwd(p: &str) -> String {
    for pre in ["/proc/self/cwd", "/proc/thread-self/cwd"] {
        if let Some(rest) = p.strip_prefix(pre) {
            if rest.is_empty() {
                return ".".into();
            }
            if let Some(r) = rest.strip_prefix('/') {
                return if r.is_empty() {
                    ".".into()
                } else {
                    r.to_string()
                };
            }
        }
    }
    p.to_string()
}

/// A URL carrying a long opaque string (a token, an encoded secret): never
/// offered "always", so a one-time approval cannot become a standing channel.
pub fn opaque_url(raw: &str) -> bool {
    let mut run = 0usize;
    let mut best = 0usize;
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-' | '%') {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    // the longest run must not be just the host/path words: require mixed classes
    best >= 32 && {
        let digits = raw.chars().filter(|c| c.is_ascii_digit()).count();
        let upper = raw.chars().filter(|c| c.is_ascii_uppercase()).count();
        digits >= 6 || upper >= 6 || raw.contains('%')
    }
}

/// The path-like part of a shell argument, if any: the word itself, or the
/// value of `--opt=value`, without a leading `@` (curl's `@file`).
fn path_candidate(w: &str) -> Option<&str> {
    let v = if w.starts_with('-') {
        let (_, v) = w.split_once('=')?;
        v
    } else if let Some((k, v)) = w.split_once('=') {
        // `of=/dev/sda`, `file=@.env`: judge the value; keep the word when the key looks like a path.
        if k.contains('/') { w } else { v }
    } else {
        w
    };
    let v = v.strip_prefix('@').unwrap_or(v);
    if v.is_empty() || v.contains("://") || v == "-" {
        return None;
    }
    Some(v)
}
