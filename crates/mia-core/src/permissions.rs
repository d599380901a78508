//! Glue between config, the permission engine and the dialog Events.

use mia_config::{Config, LayerKind};
use mia_permission::{
    Checker, Decision, PermissionAction, PermissionRule, PolicyInput, Request, RuleList,
};
use mia_protocol::{CommandSegment, PermissionReplyKind, PermissionRequest, SessionId};
use serde_json::Value;

/// The one recipe for an agent's permission policy in a session: the
/// config layers, the agent's own rules, the session's answers, the
/// project's approvals and trust, and mia-code's own data protected. The
/// turn, the read-only check, subagents' ancestors, `permissions check`,
/// the desktop and serve all compile their policy here, so no caller can
/// forget a part (as a copy once forgot [`protect_mia_home`]).
#[derive(Debug, Clone)]
pub struct PolicyRecipe<'a> {
    pub config: &'a Config,
    pub agent: &'a str,
    pub paths: &'a mia_config::Paths,
    /// "Always"/"never" answers of the session (and `--allow` rules).
    pub session: Vec<PermissionRule>,
    /// "Always for this project" approvals.
    pub approvals: Vec<PermissionRule>,
    pub trusted: bool,
}

impl<'a> PolicyRecipe<'a> {
    /// The agent's policy from the config alone: no answers, no
    /// approvals, an untrusted workspace.
    pub fn new(config: &'a Config, agent: &'a str, paths: &'a mia_config::Paths) -> Self {
        Self {
            config,
            agent,
            paths,
            session: Vec::new(),
            approvals: Vec::new(),
            trusted: false,
        }
    }

    /// With the session's answers (and `--allow` rules).
    #[must_use]
    pub fn session(mut self, rules: Vec<PermissionRule>) -> Self {
        self.session = rules;
        self
    }

    /// With the project's approvals and whether the workspace is trusted.
    #[must_use]
    pub fn project(mut self, approvals: Vec<PermissionRule>, trusted: bool) -> Self {
        self.approvals = approvals;
        self.trusted = trusted;
        self
    }

    /// The engine's input.
    pub fn input(&self) -> PolicyInput {
        let mut input = policy_input(
            self.config,
            self.agent,
            self.session.clone(),
            self.approvals.clone(),
            self.trusted,
            Some(self.paths.user_home.display().to_string()),
        );
        protect_mia_home(&mut input, self.paths);
        input
    }

    /// The compiled policy.
    pub fn compile(&self) -> mia_permission::Policy {
        mia_permission::Policy::compile(&self.input())
    }
}

/// The engine input for `agent` from the config layers and session state.
fn policy_input(
    config: &Config,
    agent: &str,
    session: Vec<PermissionRule>,
    project_approvals: Vec<PermissionRule>,
    workspace_trusted: bool,
    home: Option<String>,
) -> PolicyInput {
    let mut input = PolicyInput {
        agent: agent.to_string(),
        session,
        project_approvals,
        workspace_trusted,
        home,
        ..PolicyInput::default()
    };
    for layer in &config.layers {
        let source = layer.source();
        let agent_rules = layer
            .file
            .agent
            .as_ref()
            .and_then(|a| a.get(agent))
            .and_then(|a| a.permissions.clone());
        let rules = layer.file.permissions.clone();
        match layer.kind {
            LayerKind::Builtin => {}
            LayerKind::Global => {
                if let Some(r) = rules {
                    input.global.push(RuleList::new(source.clone(), r));
                }
                if let Some(r) = agent_rules {
                    input.agent_global.push(RuleList::new(source, r));
                }
            }
            LayerKind::Project => {
                if let Some(r) = rules {
                    input.project.push(RuleList::new(source.clone(), r));
                }
                if let Some(r) = agent_rules {
                    input.agent_project.push(RuleList::new(source, r));
                }
            }
        }
    }
    // Later files win: the engine checks lists in the order given.
    input.global.reverse();
    input.project.reverse();
    input.agent_global.reverse();
    input.agent_project.reverse();
    input
}

/// What the shell tool's commands are parsed as here: PowerShell where it
/// is the shell (Windows without bash), which the engine does not parse.
pub(crate) fn shell_dialect() -> mia_permission::ShellDialect {
    match mia_tools::shell::current() {
        Ok(s) if s.kind == mia_tools::shell::ShellKind::PowerShell => {
            mia_permission::ShellDialect::PowerShell
        }
        _ => mia_permission::ShellDialect::Posix,
    }
}

/// mia-code's own data (sessions, approvals, logs, credentials) is a
/// protected path wherever `MIA_CODE_HOME` points, and reading it or the
/// global config files (API keys) asks.
fn protect_mia_home(input: &mut PolicyInput, paths: &mia_config::Paths) {
    let mia_home = paths.home.as_path();
    input.private.push(format!("{}/**", mia_home.display()));
    for c in &paths.global_configs {
        input.private.push(c.display().to_string());
    }
    input
        .extra_protected
        .push(format!("{}/**", mia_home.display()));
    // mia-code's own secrets are never read by an agent (an invariant deny),
    // under the configured path and its real path.
    let mut homes = vec![mia_home.to_path_buf()];
    if let Ok(real) = dunce::canonicalize(mia_home)
        && real != mia_home
    {
        homes.push(real);
    }
    for h in homes {
        for f in SECRET_FILE_NAMES {
            input.secrets.push(h.join(f).display().to_string());
        }
    }
}

/// Files in `$MIA_CODE_HOME` that hold secrets: API keys without a keychain, the serve token.
pub const SECRET_FILE_NAMES: &[&str] = &["credentials.json", "server.json"];

/// The engine request for one planned tool target.
pub fn request_for(permission: &str, target: &mia_tools::Target) -> Request {
    match target {
        mia_tools::Target::Path(p) => Request::path(permission, &p.display().to_string()),
        mia_tools::Target::Command(c) => Request::command(c),
        mia_tools::Target::Url(u) => Request::url(permission, u),
        mia_tools::Target::None => Request::bare(permission),
        mia_tools::Target::Text(t) => Request::infer(permission, Some(t)),
    }
}

/// "File editing: DENIED"-style lines for the system prompt. When some
/// targets fare better than the general rule (plan's read-only shell
/// commands), the line says so.
pub fn summary(checker: &Checker<'_>) -> String {
    let verdict = |a: PermissionAction| match a {
        PermissionAction::Allow => "ALLOWED",
        PermissionAction::Ask => "ASK — requires the user's permission",
        PermissionAction::Deny => "DENIED",
    };
    [
        ("read", "Reading files"),
        ("glob", "Listing files"),
        ("grep", "Searching file contents"),
        ("edit", "Editing files"),
        ("write", "Creating and overwriting files"),
        ("bash", "Shell commands"),
        ("fetch", "Fetching web pages"),
        ("external_directory", "Files outside the project"),
        ("todo_create", "Todo list"),
    ]
    .iter()
    .map(|(perm, label)| {
        let general = checker.check(&Request::bare(perm)).decision;
        let best = checker.availability(perm);
        if best < general {
            let some = match best {
                PermissionAction::Allow => "allowed",
                _ => "possible with the user's permission",
            };
            format!("- {label}: {} (some targets: {some})", verdict(general))
        } else {
            format!("- {label}: {}", verdict(general))
        }
    })
    .collect::<Vec<_>>()
    .join("\n")
}

/// Whether a tool is offered to the model at all: some target of its
/// permission could be allowed (or asked, when a person can answer).
pub fn tool_offered(checker: &Checker<'_>, permission: &str) -> bool {
    checker.availability(permission) != PermissionAction::Deny
}

/// The dialog payload for an ask.
pub fn dialog(
    id: String,
    session_id: SessionId,
    agent: &str,
    tool: &str,
    input: &Value,
    decision: &Decision,
) -> PermissionRequest {
    use mia_protocol::ReplyOption as O;
    let mut options = vec![O::Once];
    if !decision.always.is_empty() {
        options.extend([O::Session, O::Project]);
    }
    options.extend([O::Deny, O::Never, O::RejectWithFeedback]);
    PermissionRequest {
        id,
        session_id,
        agent: agent.to_string(),
        tool: tool.to_string(),
        call_id: None,
        permission: decision.permission.clone(),
        input: input.clone(),
        target: decision.target.clone(),
        segments: decision
            .segments
            .iter()
            .map(|s| CommandSegment {
                command: s.command.clone(),
                decision: s.decision,
                dangerous: s.decision == PermissionAction::Deny || !s.opaque.is_empty(),
                reason: Some(s.reason.clone()).filter(|r| !r.is_empty()),
            })
            .collect(),
        matched_rule: decision.matched.as_ref().map(|m| m.describe()),
        reason: decision.reason.clone(),
        options,
        root_session_id: None,
        proposed: None,
    }
}

/// Map the wire reply to the engine's reply.
pub fn engine_reply(reply: &PermissionReplyKind) -> mia_permission::Reply {
    use mia_permission::Reply;
    match reply {
        PermissionReplyKind::Once => Reply::Once,
        PermissionReplyKind::Session => Reply::Always,
        PermissionReplyKind::Project => Reply::AlwaysForProject,
        PermissionReplyKind::Deny => Reply::Reject,
        PermissionReplyKind::Never => Reply::Never,
        PermissionReplyKind::RejectWithFeedback { feedback } => {
            Reply::RejectWithFeedback(feedback.clone())
        }
    }
}

/// An agent's compiled policy in a project, as `permissions check|explain|show`
/// judge with it: the same recipe and wall as the agent's turns.
pub struct AgentPolicy {
    policy: mia_permission::Policy,
    path_ctx: mia_permission::PathContext,
    /// How this agent's shell commands are walled in here.
    wall: crate::sandbox::Wall,
}

/// One request judged by [`AgentPolicy::check`].
pub struct CheckReport {
    /// The stable JSON object of `permissions check --json`.
    pub json: Value,
    /// The decision explained for people.
    pub explanation: String,
    /// `allow`, `ask` or `deny`.
    pub decision: String,
    pub reason: String,
}

impl AgentPolicy {
    /// Judge `permission` on `subject` (a path, URL, command or text); a
    /// headless check turns asks into denials.
    pub fn check(&self, permission: &str, subject: Option<&str>, headless: bool) -> CheckReport {
        let request = Request::infer(permission, subject);
        let mut checker = self.wall.apply(Checker::new(&self.policy, &self.path_ctx));
        if headless {
            checker = checker.with_answerer(mia_permission::Answerer::Headless);
        }
        let d = checker.check(&request);
        CheckReport {
            json: d.to_check_json(),
            explanation: d.explain(),
            decision: d.decision.to_string(),
            reason: d.reason.clone(),
        }
    }

    /// Rules that may not do what their author meant, as JSON.
    pub fn lint_json(&self) -> Value {
        serde_json::to_value(&self.policy.lint).unwrap_or(Value::Null)
    }

    /// The same warnings, as sentences.
    pub fn lint_messages(&self) -> Vec<String> {
        self.policy.lint.iter().map(|l| l.message.clone()).collect()
    }

    /// Rules that could not be compiled, as sentences.
    pub fn errors(&self) -> Vec<String> {
        self.policy.errors.iter().map(ToString::to_string).collect()
    }

    /// The layered ruleset with the source of every rule, as JSON
    /// (`permissions show --json`).
    pub fn show_json(&self) -> Value {
        let p = &self.policy;
        serde_json::json!({
            "agent": p.agent,
            "rules": p.positions(),
            "lint": p.lint,
            "ignored": p.ignored,
            "errors": p.errors,
        })
    }

    /// The same, for people.
    pub fn render(&self) -> String {
        self.policy.render()
    }
}

impl crate::Runtime {
    /// `agent`'s policy in `directory` (the configured default agent
    /// when `None`), with the project's approvals and trust.
    pub async fn agent_policy(
        &self,
        directory: &std::path::Path,
        agent: Option<&str>,
    ) -> Result<AgentPolicy, crate::CoreError> {
        let config = self.load_config(Some(directory.to_path_buf())).await?;
        let agent = agent.map_or_else(|| config.default_agent().to_string(), str::to_string);
        let (approvals, trusted) = self.project_permission_inputs(directory, &agent).await?;
        let paths = &self.options().paths;
        let policy = PolicyRecipe::new(&config, &agent, paths)
            .project(approvals, trusted)
            .compile();
        let path_ctx = mia_permission::PathContext::new(directory, Some(paths.user_home.clone()))
            .map_err(|e| {
            crate::CoreError::Failed(format!(
                "resolving the project directory {}: {e}",
                directory.display()
            ))
        })?;
        let wall = {
            let checker = Checker::new(&policy, &path_ctx);
            let read_only = !tool_offered(&checker, "edit") && !tool_offered(&checker, "write");
            crate::sandbox::confines_shell(&config, &agent, read_only, &path_ctx.root, paths)
        };
        Ok(AgentPolicy {
            policy,
            path_ctx,
            wall,
        })
    }
}
