//! What a sandboxed command may do: pure data, the same on every OS.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::env::EnvRule;

/// `sandbox.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only inside the writable roots (the session's project or
    /// worktree, its private temp dir, `sandbox.writable`, package caches),
    /// and never to the protected paths inside them.
    WorkspaceWrite,
    /// No writes at all (devices such as `/dev/null` and a throwaway `/tmp` aside).
    ReadOnly,
    /// No sandbox: the permission engine alone decides.
    Off,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `sandbox.network`: what a sandboxed command may reach. Whatever it is,
/// a program that ignores the proxy has no network at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkAccess {
    /// No network (loopback inside the sandbox only).
    Deny,
    /// Through mia-code's proxy; the first connection to a host asks.
    Ask,
    /// Through mia-code's proxy; every host but the denied ones.
    Allow,
}

impl NetworkAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }

    /// Does the command get a proxy?
    pub fn proxied(self) -> bool {
        self != Self::Deny
    }
}

/// The network rules the proxy applies before it asks anyone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetRules {
    /// `sandbox.allowLocalhost`: the host's loopback services (through the
    /// proxy only).
    pub allow_localhost: bool,
    /// `sandbox.registries`: the package registries of [`crate::REGISTRY_HOSTS`]
    /// are reached without asking.
    pub registries: bool,
}

impl Default for NetRules {
    fn default() -> Self {
        Self {
            allow_localhost: false,
            registries: true,
        }
    }
}

/// The policy one command runs under. Paths are absolute; the ones that do
/// not exist are skipped when the sandbox is built (protected paths are
/// protected whether they exist or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    pub network: NetworkAccess,
    pub net_rules: NetRules,
    /// Where the command may create, change and remove files (workspace-write only).
    pub writable: Vec<PathBuf>,
    /// Project or worktree roots: where the command runs (always visible),
    /// and where [`PROTECTED_NAMES`] stay read-only.
    pub projects: Vec<PathBuf>,
    /// Git directories (the repository's common dir): their `config`,
    /// `hooks/`, `info/` and submodules' configs stay read-only.
    pub git_dirs: Vec<PathBuf>,
    /// More paths that stay read-only inside the writable roots
    /// (`sandbox.protect`, the person's own bin directories and rc files
    /// when a writable root holds them), existing or not.
    pub protect: Vec<PathBuf>,
    /// Files and directories the command cannot read (mia-code's home and
    /// config, credential stores, other users' homes).
    pub hidden: Vec<PathBuf>,
    /// Paths inside hidden ones that stay readable (a plugin's own folder).
    pub visible: Vec<PathBuf>,
    /// Unix sockets outside the writable roots the command may connect to
    /// (`sandbox.unixSockets`).
    pub unix_sockets: Vec<PathBuf>,
    /// The host directory that becomes the command's private `/tmp` (kept
    /// between a session's commands); `None`: an empty one per command.
    pub tmp: Option<PathBuf>,
    /// The environment the command gets.
    pub env: EnvRule,
    /// The person's own home directories (never hidden as someone else's).
    pub homes: Vec<PathBuf>,
}

/// What the caller knows about the session, turned into a [`SandboxPolicy`].
#[derive(Debug, Clone, Default)]
pub struct PolicyInputs {
    /// The session's project directory or worktree.
    pub project_root: PathBuf,
    /// The repository's git common dir when it lies outside the project
    /// (a worktree's): `git commit` writes objects and refs there.
    pub git_common_dir: Option<PathBuf>,
    /// `sandbox.writable`, already expanded (`~`) and absolute.
    pub writable: Vec<PathBuf>,
    /// Package-manager caches (`~/.npm`, `~/.cargo/registry`, ...) that stay writable.
    pub caches: Vec<PathBuf>,
    /// Paths hidden from the command.
    pub hidden: Vec<PathBuf>,
    /// Paths inside hidden ones that stay readable.
    pub visible: Vec<PathBuf>,
    /// `sandbox.protect`, absolute.
    pub protect: Vec<PathBuf>,
    /// The person's home directories (`$HOME` and the account's): their rc
    /// files and bin directories are protected when a writable root holds them.
    pub homes: Vec<PathBuf>,
    /// `sandbox.unixSockets`, absolute.
    pub unix_sockets: Vec<PathBuf>,
    /// The private `/tmp` directory.
    pub tmp: Option<PathBuf>,
    pub net_rules: NetRules,
    pub env: EnvRule,
}

/// Names inside a project or worktree root that stay read-only in the
/// sandbox, whether they exist or not: each makes code run later outside
/// the sandbox (mia-code's, an editor's, git's or direnv's). The git dir
/// itself is handled apart ([`SandboxPolicy::git_dirs`]); a root without
/// `.git` gets its `.git` protected, so no repository appears in it.
pub const PROTECTED_NAMES: &[&str] = &[
    ".gitmodules",
    ".mcp.json",
    ".mia-code.json",
    "mia-code.json",
    ".mia-code",
    ".vscode",
    ".idea",
    ".envrc",
    ".claude",
];

/// Inside a git directory: what git reads to decide what to run.
pub const PROTECTED_GIT: &[&str] = &["config", "config.worktree", "hooks", "info"];

/// Under a person's home, when a writable root holds it: the files their
/// shell reads and the directories it runs programs from.
pub const PROTECTED_HOME: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".config/git",
    ".gitconfig",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".pam_environment",
    ".xprofile",
    ".xsessionrc",
    ".local/bin",
    ".cargo/bin",
    ".cargo/config.toml",
    ".cargo/env",
    "go/bin",
    ".bun/bin",
    ".deno/bin",
    ".npm-global/bin",
    ".npm/_npx",
    ".yarn/bin",
    ".local/share/pnpm",
    ".cache/node/corepack",
    ".cache/pre-commit",
    ".mia-code.json",
    ".config/mia-code",
];

/// The names of [`PROTECTED_HOME`]'s directories (a missing one is
/// protected as a directory).
pub const PROTECTED_HOME_DIRS: &[&str] = &[
    "fish",
    "git",
    "autostart",
    "systemd",
    "environment.d",
    "bin",
    "_npx",
    "pnpm",
    "corepack",
    "pre-commit",
    "mia-code",
];

/// Package-manager caches under `home` that workspace-write keeps writable
/// (`sandbox.packageCaches`, on by default): without them `npm install` or
/// `cargo build` fail on their first download. None of them holds
/// credentials, and the places inside them that run code later (npx's
/// cache, global bin directories) stay protected ([`PROTECTED_HOME`]).
pub fn package_caches(home: &Path) -> Vec<PathBuf> {
    [
        ".npm",
        ".cache",
        ".yarn",
        ".pnpm-store",
        ".local/share/pnpm/store",
        ".bun/install/cache",
        ".cargo/registry",
        ".cargo/git",
        ".rustup/tmp",
        ".gradle/caches",
        ".m2/repository",
        "go/pkg/mod",
        "Library/Caches",
    ]
    .iter()
    .map(|p| home.join(p))
    .collect()
}

fn dedup(v: &mut Vec<PathBuf>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|p| seen.insert(p.clone()));
}

impl SandboxPolicy {
    /// No sandbox.
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            network: NetworkAccess::Allow,
            net_rules: NetRules::default(),
            writable: Vec::new(),
            projects: Vec::new(),
            git_dirs: Vec::new(),
            protect: Vec::new(),
            hidden: Vec::new(),
            visible: Vec::new(),
            unix_sockets: Vec::new(),
            tmp: None,
            env: EnvRule::default(),
            homes: Vec::new(),
        }
    }

    pub fn build(mode: SandboxMode, network: NetworkAccess, inputs: PolicyInputs) -> Self {
        let mut writable = Vec::new();
        let mut projects = Vec::new();
        let mut git_dirs = Vec::new();
        let mut protect = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            writable.push(inputs.project_root.clone());
            writable.extend(inputs.git_common_dir.clone());
            writable.extend(inputs.writable);
            writable.extend(inputs.caches);
            dedup(&mut writable);
            git_dirs.extend(inputs.git_common_dir);
            protect.extend(inputs.protect);
            for home in &inputs.homes {
                for rel in PROTECTED_HOME {
                    let p = home.join(rel);
                    if writable.iter().any(|w| p.starts_with(w)) {
                        protect.push(p);
                    }
                }
            }
            dedup(&mut protect);
        }
        if mode != SandboxMode::Off {
            projects.push(inputs.project_root.clone());
        }
        Self {
            mode,
            network,
            net_rules: inputs.net_rules,
            writable,
            projects,
            git_dirs,
            protect,
            hidden: inputs.hidden,
            visible: inputs.visible,
            unix_sockets: inputs.unix_sockets,
            tmp: inputs.tmp,
            env: inputs.env,
            homes: inputs.homes,
        }
    }

    pub fn is_off(&self) -> bool {
        self.mode == SandboxMode::Off
    }

    /// `workspace-write, network ask`: for tool cards and results.
    pub fn describe(&self) -> String {
        match self.mode {
            SandboxMode::Off => "off".into(),
            m => format!(
                "{m}, network {}",
                match self.network {
                    NetworkAccess::Allow => "through the proxy",
                    NetworkAccess::Ask => "asks per host",
                    NetworkAccess::Deny => "denied",
                }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_write_lists_project_git_and_caches_once() {
        let p = SandboxPolicy::build(
            SandboxMode::WorkspaceWrite,
            NetworkAccess::Deny,
            PolicyInputs {
                project_root: "/w/p".into(),
                git_common_dir: Some("/w/main/.git".into()),
                writable: vec!["/w/p".into(), "/opt/x".into()],
                ..PolicyInputs::default()
            },
        );
        assert_eq!(p.writable[0], PathBuf::from("/w/p"));
        assert_eq!(p.writable[1], PathBuf::from("/w/main/.git"));
        assert_eq!(
            p.writable
                .iter()
                .filter(|w| *w == Path::new("/w/p"))
                .count(),
            1
        );
        assert!(p.writable.contains(&PathBuf::from("/opt/x")));
        assert_eq!(p.projects, vec![PathBuf::from("/w/p")]);
        assert_eq!(p.git_dirs, vec![PathBuf::from("/w/main/.git")]);
        assert_eq!(p.describe(), "workspace-write, network denied");
    }

    #[test]
    fn a_home_inside_a_writable_root_keeps_its_rc_files_and_bins_protected() {
        let p = SandboxPolicy::build(
            SandboxMode::WorkspaceWrite,
            NetworkAccess::Ask,
            PolicyInputs {
                project_root: "/home/me".into(),
                caches: package_caches(Path::new("/home/other")),
                homes: vec!["/home/me".into(), "/home/other".into()],
                ..PolicyInputs::default()
            },
        );
        for want in [
            "/home/me/.bashrc",
            "/home/me/.local/bin",
            "/home/me/.npm/_npx",
        ] {
            assert!(p.protect.contains(&PathBuf::from(want)), "{want}");
        }
        // The other home is not writable but for its caches: its npx cache
        // (inside the writable ~/.npm) is protected, its rc files need not be.
        assert!(p.protect.contains(&PathBuf::from("/home/other/.npm/_npx")));
        assert!(!p.protect.contains(&PathBuf::from("/home/other/.bashrc")));
        // pnpm's global bins live in PNPM_HOME itself: only its store is a cache.
        assert!(
            !p.writable
                .contains(&PathBuf::from("/home/other/.local/share/pnpm"))
        );
        assert_eq!(p.describe(), "workspace-write, network asks per host");
    }

    #[test]
    fn read_only_has_no_writable_roots_and_nothing_to_protect() {
        let p = SandboxPolicy::build(
            SandboxMode::ReadOnly,
            NetworkAccess::Allow,
            PolicyInputs {
                project_root: "/w/p".into(),
                writable: vec!["/opt/x".into()],
                protect: vec!["/w/p/secret".into()],
                ..PolicyInputs::default()
            },
        );
        assert!(p.writable.is_empty() && p.protect.is_empty());
        assert_eq!(p.projects, vec![PathBuf::from("/w/p")]);
        assert_eq!(p.describe(), "read-only, network through the proxy");
    }
}
