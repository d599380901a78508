//! What a sandboxed command may do: pure data, the same on every OS.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// `sandbox.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only inside the writable roots (the session's project or
    /// worktree, the temp dir, `sandbox.writable`); everything else read-only.
    WorkspaceWrite,
    /// No writes at all (devices such as `/dev/null` aside).
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

/// `sandbox.network`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkAccess {
    Allow,
    Deny,
}

impl NetworkAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
        }
    }
}

/// The policy one command runs under. Paths are absolute; the ones that do
/// not exist are skipped when the sandbox is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    pub network: NetworkAccess,
    /// Where the command may create, change and remove files (workspace-write only).
    pub writable: Vec<PathBuf>,
    /// Files and directories whose contents the command may not read
    /// (credential stores, mia-code's own secrets). Names stay listable.
    pub hidden: Vec<PathBuf>,
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
    /// Package-manager caches (`~/.npm`, `~/.cache`, ...) that stay writable.
    pub caches: Vec<PathBuf>,
    /// Paths hidden from the command.
    pub hidden: Vec<PathBuf>,
}

/// Temp directories every workspace-write command may use.
pub fn temp_dirs() -> Vec<PathBuf> {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut v = vec![std::env::temp_dir()];
    #[cfg(unix)]
    for p in ["/tmp", "/var/tmp", "/dev/shm"] {
        let p = PathBuf::from(p);
        if !v.contains(&p) {
            v.push(p);
        }
    }
    v
}

/// Package-manager caches under `home` that workspace-write keeps writable
/// (`sandbox.packageCaches`, on by default): without them `npm install` or
/// `cargo build` fail on their first download. None of them holds credentials.
pub fn package_caches(home: &Path) -> Vec<PathBuf> {
    [
        ".npm",
        ".cache",
        ".yarn",
        ".pnpm-store",
        ".local/share/pnpm",
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

impl SandboxPolicy {
    /// No sandbox.
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            network: NetworkAccess::Allow,
            writable: Vec::new(),
            hidden: Vec::new(),
        }
    }

    pub fn build(mode: SandboxMode, network: NetworkAccess, inputs: PolicyInputs) -> Self {
        let mut writable = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            writable.push(inputs.project_root);
            writable.extend(inputs.git_common_dir);
            writable.extend(temp_dirs());
            writable.extend(inputs.writable);
            writable.extend(inputs.caches);
            let mut seen = std::collections::HashSet::new();
            writable.retain(|p| seen.insert(p.clone()));
        }
        Self {
            mode,
            network,
            writable,
            hidden: inputs.hidden,
        }
    }

    pub fn is_off(&self) -> bool {
        self.mode == SandboxMode::Off
    }

    /// `workspace-write, network denied`: for tool cards and results.
    pub fn describe(&self) -> String {
        match self.mode {
            SandboxMode::Off => "off".into(),
            m => format!(
                "{m}, network {}",
                match self.network {
                    NetworkAccess::Allow => "allowed",
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
    fn workspace_write_lists_project_git_and_temp_once() {
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
        assert!(p.writable.contains(&std::env::temp_dir()));
        assert_eq!(
            p.writable
                .iter()
                .filter(|w| *w == Path::new("/w/p"))
                .count(),
            1
        );
        assert!(p.writable.contains(&PathBuf::from("/opt/x")));
        assert_eq!(p.describe(), "workspace-write, network denied");
    }

    #[test]
    fn read_only_has_no_writable_roots() {
        let p = SandboxPolicy::build(
            SandboxMode::ReadOnly,
            NetworkAccess::Allow,
            PolicyInputs {
                project_root: "/w/p".into(),
                writable: vec!["/opt/x".into()],
                ..PolicyInputs::default()
            },
        );
        assert!(p.writable.is_empty());
        assert_eq!(p.describe(), "read-only, network allowed");
    }
}
