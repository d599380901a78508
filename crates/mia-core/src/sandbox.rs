//! The OS sandbox a session's shell commands run in: `sandbox.*` and
//! `agent.<name>.sandbox` resolved against the session's directory, the
//! agent and this machine (docs/security.md).

use std::path::{Path, PathBuf};

use mia_config::{Config, NetworkSetting, SandboxModeSetting};
use mia_protocol::SandboxEffect;
use mia_sandbox::{NetworkAccess, PolicyInputs, SandboxMode, SandboxPolicy, Support};
use mia_tools::ShellSandbox;

fn mode_of(s: SandboxModeSetting) -> SandboxMode {
    match s {
        SandboxModeSetting::WorkspaceWrite => SandboxMode::WorkspaceWrite,
        SandboxModeSetting::ReadOnly => SandboxMode::ReadOnly,
        SandboxModeSetting::Off => SandboxMode::Off,
    }
}

fn network_of(s: NetworkSetting) -> NetworkAccess {
    match s {
        NetworkSetting::Allow => NetworkAccess::Allow,
        NetworkSetting::Ask => NetworkAccess::Ask,
        NetworkSetting::Deny => NetworkAccess::Deny,
    }
}

/// `~/x` against the home, anything else against the project.
fn expand(p: &str, home: &Path, project_root: &Path) -> PathBuf {
    if p == "~" {
        home.to_path_buf()
    } else if let Some(rest) = p.strip_prefix("~/") {
        home.join(rest)
    } else {
        project_root.join(p)
    }
}

/// What a sandboxed command may not read: mia-code's home and config
/// (wherever `MIA_CODE_HOME`, `HOME` and `XDG_CONFIG_HOME` point, and the
/// account's real home), and the credential stores the engine guards.
pub(crate) fn hidden_paths(paths: &mia_config::Paths) -> Vec<PathBuf> {
    let mut homes = vec![paths.user_home.clone()];
    homes.extend(mia_sandbox::account_home());
    let mut hidden = Vec::new();
    for h in &homes {
        hidden.extend(mia_permission::agents::credential_store_paths(h));
        hidden.push(h.join(".mia-code"));
        hidden.push(h.join(".mia-code.json"));
        hidden.push(h.join(".config").join("mia-code"));
    }
    hidden.push(paths.home.clone());
    for c in &paths.global_configs {
        hidden.push(c.clone());
        if c.file_name().is_some_and(|n| n == "config.json")
            && let Some(dir) = c.parent()
        {
            hidden.push(dir.to_path_buf());
        }
    }
    let mut seen = std::collections::HashSet::new();
    hidden.retain(|p| seen.insert(p.clone()));
    hidden
}

/// The person's own homes (`$HOME` as mia-code sees it, the account's).
fn own_homes(paths: &mia_config::Paths) -> Vec<PathBuf> {
    let mut v = vec![paths.user_home.clone()];
    v.extend(mia_sandbox::account_home());
    v
}

/// The settings every sandboxed process shares (the environment rule, the
/// network rules, allowed sockets, protected and hidden paths) from
/// `sandbox.*`; `project_root` resolves relative paths.
pub(crate) fn inputs(
    config: &Config,
    project_root: &Path,
    paths: &mia_config::Paths,
) -> PolicyInputs {
    let global = config.merged.sandbox.clone().unwrap_or_default();
    let home = &paths.user_home;
    // `sandbox.protect` adds up over the layers (a project adds, never removes).
    let protect = config
        .layers
        .iter()
        .filter_map(|l| l.file.sandbox.as_ref())
        .flat_map(|s| s.protect.iter().flatten())
        .map(|p| expand(p, home, project_root))
        .collect();
    let env = global.env.clone().unwrap_or_default();
    PolicyInputs {
        project_root: project_root.to_path_buf(),
        git_common_dir: None,
        writable: global
            .writable
            .iter()
            .flatten()
            .map(|p| expand(p, home, project_root))
            .collect(),
        caches: if global.package_caches.unwrap_or(true) {
            mia_sandbox::package_caches(home)
        } else {
            Vec::new()
        },
        hidden: hidden_paths(paths),
        visible: Vec::new(),
        protect,
        homes: own_homes(paths),
        unix_sockets: global
            .unix_sockets
            .iter()
            .flatten()
            .map(|p| expand(p, home, project_root))
            .collect(),
        tmp: None,
        net_rules: mia_sandbox::NetRules {
            allow_localhost: global.allow_localhost.unwrap_or(false),
            registries: global.registries.unwrap_or(true),
        },
        env: mia_sandbox::EnvRule {
            keep: env.keep.unwrap_or_default(),
            set: env.set.unwrap_or_default().into_iter().collect(),
        },
    }
}

/// The policy for `agent`'s commands in `project_root`. `read_only`: the
/// agent cannot edit or write (plan, explore), so its shell is read-only by
/// construction unless the sandbox is off altogether. `tmp`: the session's
/// private `/tmp`.
pub(crate) fn policy(
    config: &Config,
    agent: &str,
    read_only: bool,
    project_root: &Path,
    paths: &mia_config::Paths,
    tmp: Option<PathBuf>,
) -> SandboxPolicy {
    let global = config.merged.sandbox.clone().unwrap_or_default();
    let per_agent = config
        .merged
        .agent
        .as_ref()
        .and_then(|a| a.get(agent))
        .and_then(|a| a.sandbox.clone())
        .unwrap_or_default();
    let configured = global
        .mode
        .map(mode_of)
        .unwrap_or_else(mia_sandbox::default_mode);
    let mut inputs = inputs(config, project_root, paths);
    if configured == SandboxMode::Off {
        return SandboxPolicy {
            env: inputs.env,
            ..SandboxPolicy::off()
        };
    }
    // An agent that cannot edit is read-only whatever its own setting says;
    // only `sandbox.mode: off` turns its sandbox off.
    let mode = if read_only {
        SandboxMode::ReadOnly
    } else {
        per_agent.mode.map(mode_of).unwrap_or(configured)
    };
    if mode == SandboxMode::Off {
        return SandboxPolicy {
            env: inputs.env,
            ..SandboxPolicy::off()
        };
    }
    let network = per_agent
        .network
        .or(global.network)
        .map(network_of)
        .unwrap_or(if read_only {
            NetworkAccess::Deny
        } else {
            NetworkAccess::Ask
        });
    // A worktree's commits write objects and refs into the main repository's git dir.
    inputs.git_common_dir = mia_git::main_root_of(project_root).map(|m| m.join(".git"));
    inputs.tmp = tmp;
    SandboxPolicy::build(mode, network, inputs)
}

/// The hosts of a process nobody is asked about (a worktree script, a
/// project's MCP server or plugin): the `fetch` rules of the config decide,
/// `sandbox.network: "allow"` lets the rest through, otherwise refused.
struct RulesGate {
    policy: mia_permission::Policy,
    path_ctx: mia_permission::PathContext,
    mode: NetworkAccess,
}

impl mia_sandbox::proxy::HostGate for RulesGate {
    fn decide<'a>(
        &'a self,
        req: mia_sandbox::proxy::HostRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = mia_sandbox::proxy::Verdict> + Send + 'a>>
    {
        use mia_permission::PermissionAction;
        use mia_sandbox::proxy::Verdict;
        let d = mia_permission::Checker::new(&self.policy, &self.path_ctx)
            .check(&mia_permission::Request::url("fetch", &req.url_for_rules()));
        let v = match d.decision {
            PermissionAction::Allow => Verdict::Allow,
            PermissionAction::Ask if self.mode == NetworkAccess::Allow => Verdict::Allow,
            PermissionAction::Ask => Verdict::Deny(format!(
                "nobody is asked about the connections of worktree scripts, MCP servers and plugins: allow {} with a `fetch` rule",
                req.host
            )),
            PermissionAction::Deny => Verdict::Deny(d.denial_message().unwrap_or(d.reason)),
        };
        Box::pin(async move { v })
    }
}

/// A confinement for a process nobody answers for, `mode` over
/// `project_root` (`None` when the sandbox is off).
fn unattended(
    config: &Config,
    project_root: &Path,
    paths: &mia_config::Paths,
    read_only: bool,
    visible: Vec<PathBuf>,
) -> Option<mia_sandbox::Confinement> {
    unattended_with(
        config,
        project_root,
        paths,
        read_only,
        visible,
        Grants::default(),
    )
}

/// What a person's config grants one of their own servers or plugins
/// beyond its data directory.
#[derive(Default)]
struct Grants {
    writable: Vec<PathBuf>,
    /// Inside those, what stays read-only (a granted project's `.git`
    /// config and hooks, `.mcp.json`, …).
    protect: Vec<PathBuf>,
}

fn unattended_with(
    config: &Config,
    project_root: &Path,
    paths: &mia_config::Paths,
    read_only: bool,
    visible: Vec<PathBuf>,
    grants: Grants,
) -> Option<mia_sandbox::Confinement> {
    let global = config.merged.sandbox.clone().unwrap_or_default();
    let configured = global
        .mode
        .map(mode_of)
        .unwrap_or_else(mia_sandbox::default_mode);
    if configured == SandboxMode::Off {
        return None;
    }
    let mode = if read_only {
        SandboxMode::ReadOnly
    } else {
        configured
    };
    let network = global.network.map(network_of).unwrap_or(NetworkAccess::Ask);
    let mut inputs = inputs(config, project_root, paths);
    inputs.git_common_dir = mia_git::main_root_of(project_root).map(|m| m.join(".git"));
    inputs.visible = visible;
    inputs.writable.extend(grants.writable);
    inputs.protect.extend(grants.protect);
    let policy = SandboxPolicy::build(mode, network, inputs);
    let recipe = crate::permissions::PolicyRecipe::new(config, config.default_agent(), paths);
    let gate = mia_permission::PathContext::new(project_root, Some(paths.user_home.clone()))
        .ok()
        .map(|path_ctx| {
            std::sync::Arc::new(RulesGate {
                policy: recipe.compile(),
                path_ctx,
                mode: network,
            }) as std::sync::Arc<dyn mia_sandbox::proxy::HostGate>
        });
    Some(mia_sandbox::Confinement { policy, gate })
}

/// The sandbox of a worktree's start script or check command, run in `dir`
/// (the worktree: it may write there and in the repository's git dir).
pub(crate) fn script_confinement(
    config: &Config,
    dir: &Path,
    paths: &mia_config::Paths,
) -> Option<mia_sandbox::Confinement> {
    unattended(config, dir, paths, false, Vec::new())
}

/// The sandbox of an MCP server or a plugin a project's config starts: the
/// project read-only (its tools change files through the agent's own
/// tools, which the engine judges), a private /tmp, mia-code's plugins
/// folder readable when `plugins` says so.
pub(crate) fn server_confinement(
    config: &Config,
    project_root: &Path,
    paths: &mia_config::Paths,
    plugins: bool,
) -> Option<mia_sandbox::Confinement> {
    let visible = if plugins {
        vec![paths.plugins_dir()]
    } else {
        Vec::new()
    };
    unattended(config, project_root, paths, true, visible)
}

/// The sandbox of one of the person's own MCP servers or plugins (from
/// their global config): it runs in its data directory (`data_dir`, inside
/// mia-code's home, which stays hidden otherwise) and may write there, in
/// `writable` (their config's grant; what makes code run later stays
/// read-only there as in a project) and the package caches (npx, uvx); it
/// reads `project` and the rest of the machine that is not hidden; its
/// connections go through the proxy under the person's `fetch` rules.
pub(crate) fn own_server_confinement(
    config: &Config,
    data_dir: &Path,
    project: &Path,
    writable: &[PathBuf],
    paths: &mia_config::Paths,
    mut visible: Vec<PathBuf>,
) -> Option<mia_sandbox::Confinement> {
    visible.push(data_dir.to_path_buf());
    visible.push(project.to_path_buf());
    let mut protect = Vec::new();
    for w in writable {
        protect.extend(mia_sandbox::PROTECTED_NAMES.iter().map(|n| w.join(n)));
        protect.extend(
            mia_sandbox::PROTECTED_GIT
                .iter()
                .map(|n| w.join(".git").join(n)),
        );
    }
    let grants = Grants {
        writable: writable.to_vec(),
        protect,
    };
    unattended_with(config, data_dir, paths, false, visible, grants)
}

/// How `bash` runs under `policy` on this machine.
pub(crate) fn shell_sandbox(policy: SandboxPolicy, read_only: bool) -> ShellSandbox {
    if policy.is_off() {
        return ShellSandbox::Off { env: policy.env };
    }
    match mia_sandbox::support() {
        Support::Available { mechanism, .. } => ShellSandbox::Confined {
            policy,
            mechanism,
            escapable: !read_only,
        },
        Support::Unavailable { reason } => ShellSandbox::Unavailable { policy, reason },
    }
}

/// The shell the bash tool runs commands in here, for `mia-code doctor`:
/// its program and whether the permission engine parses its commands
/// (bash: yes; PowerShell: no, so every command asks).
pub fn shell() -> Result<(std::path::PathBuf, String, bool), String> {
    mia_tools::shell::current()
        .map(|s| {
            (
                s.program.clone(),
                s.describe(),
                s.kind == mia_tools::shell::ShellKind::Bash,
            )
        })
        .map_err(|e| e.to_string())
}

/// How strongly a shell is walled in, as the permission engine is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wall {
    /// bubblewrap or Seatbelt: every promise holds; the engine may relax.
    Full,
    /// The Landlock fallback: commands the engine cannot read ask again.
    Fallback,
    /// No sandbox (off, or none on this machine).
    None,
}

impl Wall {
    pub fn of(sandbox: &ShellSandbox) -> Self {
        match sandbox {
            ShellSandbox::Confined { mechanism, .. } if mechanism.is_full() => Self::Full,
            ShellSandbox::Confined { .. } => Self::Fallback,
            _ => Self::None,
        }
    }

    /// The checker told how this wall stands.
    pub fn apply<'a>(self, checker: mia_permission::Checker<'a>) -> mia_permission::Checker<'a> {
        checker
            .with_sandboxed_shell(self == Self::Full)
            .with_weak_sandbox(self == Self::Fallback)
    }
}

/// The shell tool's wall for `agent` in `project_root` on this machine (what
/// the permission engine is told, for `mia-code permissions`).
pub fn confines_shell(
    config: &Config,
    agent: &str,
    read_only: bool,
    project_root: &Path,
    paths: &mia_config::Paths,
) -> Wall {
    let p = policy(config, agent, read_only, project_root, paths, None);
    Wall::of(&shell_sandbox(p, read_only))
}

/// A sandbox mode as the protocol names it.
pub fn mode_view(mode: SandboxMode) -> mia_protocol::SandboxModeView {
    match mode {
        SandboxMode::WorkspaceWrite => mia_protocol::SandboxModeView::WorkspaceWrite,
        SandboxMode::ReadOnly => mia_protocol::SandboxModeView::ReadOnly,
        SandboxMode::Off => mia_protocol::SandboxModeView::Off,
    }
}

/// A sandbox mechanism as the protocol names it.
pub fn mechanism_view(m: mia_sandbox::Mechanism) -> mia_protocol::SandboxMechanism {
    match m {
        mia_sandbox::Mechanism::Bubblewrap => mia_protocol::SandboxMechanism::Bubblewrap,
        mia_sandbox::Mechanism::Landlock => mia_protocol::SandboxMechanism::LandlockSeccomp,
        mia_sandbox::Mechanism::Seatbelt => mia_protocol::SandboxMechanism::Seatbelt,
    }
}

/// The sandbox as `doctor` and the settings screen report it.
pub type SandboxReport = mia_protocol::SandboxView;

/// The sandbox state for `config` on this machine.
pub fn report(config: &Config) -> SandboxReport {
    let mode = config
        .merged
        .sandbox
        .as_ref()
        .and_then(|s| s.mode)
        .map(mode_of)
        .unwrap_or_else(mia_sandbox::default_mode);
    let support = mia_sandbox::support();
    let (available, mechanism, detail) = match &support {
        Support::Available { mechanism, detail } => (true, Some(*mechanism), detail.clone()),
        Support::Unavailable { reason } => (false, None, reason.clone()),
    };
    let network = config
        .merged
        .sandbox
        .as_ref()
        .and_then(|s| s.network)
        .map(network_of)
        .unwrap_or(NetworkAccess::Ask);
    let env = config
        .merged
        .sandbox
        .as_ref()
        .and_then(|s| s.env.clone())
        .unwrap_or_default();
    let env = mia_sandbox::EnvRule {
        keep: env.keep.unwrap_or_default(),
        set: env.set.unwrap_or_default().into_iter().collect(),
    };
    let effect = match (mode, available) {
        (SandboxMode::Off, _) => SandboxEffect::Unconfined,
        (_, true) => SandboxEffect::Sandboxed,
        (_, false) => SandboxEffect::Ask,
    };
    SandboxReport {
        mode: mode_view(mode),
        mechanism: mechanism.map(mechanism_view),
        available,
        detail,
        effect,
        full: mechanism.is_some_and(mia_sandbox::Mechanism::is_full),
        limits: mechanism
            .map(|m| m.limits().iter().map(|l| (*l).to_string()).collect())
            .unwrap_or_default(),
        network: match network {
            NetworkAccess::Allow => mia_protocol::PermissionAction::Allow,
            NetworkAccess::Ask => mia_protocol::PermissionAction::Ask,
            NetworkAccess::Deny => mia_protocol::PermissionAction::Deny,
        },
        env: env.describe(),
    }
}

/// The ask before a command runs outside the configured sandbox: the
/// engine's verdict on `sandbox_escape` (an invariant ask; a denial when
/// nobody can answer), with a reason that says what is at stake.
pub(crate) fn escape_decision(
    checker: &mia_permission::Checker<'_>,
    input: &serde_json::Value,
    why: &mia_tools::Unconfined,
    sandbox: &ShellSandbox,
    subagent: bool,
) -> mia_permission::Decision {
    let cmd = input
        .get("command")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let mut d = checker.check(&mia_permission::Request::infer(
        mia_permission::agents::SANDBOX_ESCAPE,
        Some(cmd),
    ));
    // Once at a time: no "always" for leaving the sandbox.
    d.always.clear();
    // A subagent never leaves the sandbox: the person asked is one step
    // removed from what the subagent was told, and its command comes from a
    // prompt they did not write.
    if subagent && matches!(why, mia_tools::Unconfined::Escalation) {
        d.decision = mia_permission::PermissionAction::Deny;
        d.reason = format!(
            "Permission denied: a subagent cannot run `{cmd}` outside the OS sandbox; the calling agent can ask to, or the user can run it"
        );
        return d;
    }
    let headless = d.decision == mia_permission::PermissionAction::Deny;
    d.reason = match (why, sandbox) {
        (mia_tools::Unconfined::Escalation, ShellSandbox::Confined { policy, .. }) => format!(
            "Run `{cmd}` once outside the OS sandbox? Inside it ({}) the command was blocked; outside it can write anywhere you can and use the network.{}",
            policy.describe(),
            if headless {
                " Nobody can answer in a headless run, so it does not run."
            } else {
                ""
            }
        ),
        (mia_tools::Unconfined::Unavailable(reason), _)
        | (mia_tools::Unconfined::Escalation, ShellSandbox::Unavailable { reason, .. }) => format!(
            "The OS sandbox is unavailable ({reason}), so `{cmd}` would run unconfined.{} To run commands without the sandbox, set \"sandbox\": {{\"mode\": \"off\"}} in your global config; `mia-code doctor` shows the sandbox state.",
            if headless {
                " Nobody can approve that in a headless run, so it does not run."
            } else {
                " Allow it once?"
            }
        ),
        (mia_tools::Unconfined::Escalation, ShellSandbox::Off { .. }) => {
            format!("Run `{cmd}` outside the OS sandbox?")
        }
    };
    d
}
