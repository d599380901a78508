//! The OS sandbox a session's shell commands run in: `sandbox.*` and
//! `agent.<name>.sandbox` resolved against the session's directory, the
//! agent and this machine (docs/security.md).

use std::path::{Path, PathBuf};

use mia_config::{Config, NetworkSetting, SandboxModeSetting};
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
        NetworkSetting::Deny => NetworkAccess::Deny,
    }
}

/// The policy for `agent`'s commands in `project_root`. `read_only`: the
/// agent cannot edit or write (plan, explore), so its shell is read-only by
/// construction unless the sandbox is off altogether.
pub(crate) fn policy(
    config: &Config,
    agent: &str,
    read_only: bool,
    project_root: &Path,
    home: &Path,
    mia_home: &Path,
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
    if configured == SandboxMode::Off {
        return SandboxPolicy::off();
    }
    // An agent that cannot edit is read-only whatever its own setting says;
    // only `sandbox.mode: off` turns its sandbox off.
    let mode = if read_only {
        SandboxMode::ReadOnly
    } else {
        per_agent.mode.map(mode_of).unwrap_or(configured)
    };
    if mode == SandboxMode::Off {
        return SandboxPolicy::off();
    }
    let network = per_agent
        .network
        .or(global.network)
        .map(network_of)
        .unwrap_or(if read_only {
            NetworkAccess::Deny
        } else {
            NetworkAccess::Allow
        });
    let expand = |p: &str| -> PathBuf {
        if p == "~" {
            home.to_path_buf()
        } else if let Some(rest) = p.strip_prefix("~/") {
            home.join(rest)
        } else {
            project_root.join(p)
        }
    };
    let writable = global
        .writable
        .iter()
        .flatten()
        .map(|p| expand(p))
        .collect();
    let caches = if global.package_caches.unwrap_or(true) {
        mia_sandbox::package_caches(home)
    } else {
        Vec::new()
    };
    let mut hidden = mia_permission::agents::credential_store_paths(home);
    for dir in [mia_home.to_path_buf(), home.join(".mia-code")] {
        for f in crate::permissions::SECRET_FILE_NAMES {
            hidden.push(dir.join(f));
        }
    }
    // A worktree's commits write objects and refs into the main repository's git dir.
    let git_common_dir = mia_git::main_root_of(project_root).map(|m| m.join(".git"));
    SandboxPolicy::build(
        mode,
        network,
        PolicyInputs {
            project_root: project_root.to_path_buf(),
            git_common_dir,
            writable,
            caches,
            hidden,
        },
    )
}

/// How `bash` runs under `policy` on this machine.
pub(crate) fn shell_sandbox(policy: SandboxPolicy, read_only: bool) -> ShellSandbox {
    if policy.is_off() {
        return ShellSandbox::Off;
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

/// Will `agent`'s commands in `project_root` run confined on this machine
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

/// (what the permission engine is told, `Checker::with_sandboxed_shell`)?
pub fn confines_shell(
    config: &Config,
    agent: &str,
    read_only: bool,
    project_root: &Path,
    home: &Path,
    mia_home: &Path,
) -> bool {
    let p = policy(config, agent, read_only, project_root, home, mia_home);
    matches!(shell_sandbox(p, read_only), ShellSandbox::Confined { .. })
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
        Support::Available { mechanism, detail } => {
            (true, Some((*mechanism).to_string()), detail.clone())
        }
        Support::Unavailable { reason } => (false, None, reason.clone()),
    };
    let effect = match (mode, available) {
        (SandboxMode::Off, _) => "unconfined",
        (_, true) => "sandboxed",
        (_, false) => "ask",
    };
    SandboxReport {
        mode: mode.as_str().to_string(),
        mechanism,
        available,
        detail,
        effect: effect.to_string(),
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
        (mia_tools::Unconfined::Escalation, ShellSandbox::Off) => {
            format!("Run `{cmd}` outside the OS sandbox?")
        }
    };
    d
}
