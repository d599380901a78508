//! Which paths inside the writable roots stay read-only for one command,
//! read off the file system when the command starts (a worktree's `.git`
//! is a file, a main checkout's a directory, a plain folder has none).

use std::path::{Path, PathBuf};

use crate::policy::{PROTECTED_GIT, PROTECTED_NAMES, SandboxPolicy};

/// One protected path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    pub path: PathBuf,
    /// What it is (or, missing, what it would be): a directory or not.
    pub dir: bool,
    pub exists: bool,
}

/// The protected paths of `policy` and the git directories that must stay
/// where they are (mounted on themselves, so they cannot be renamed away
/// and replaced).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectPlan {
    pub paths: Vec<Protected>,
    pub anchors: Vec<PathBuf>,
}

const DIR_NAMES: &[&str] = &[".mia-code", ".vscode", ".idea", ".claude", "hooks", "info"];

fn is_dir_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| DIR_NAMES.contains(&n) || crate::policy::PROTECTED_HOME_DIRS.contains(&n))
}

fn canonical(p: &Path) -> PathBuf {
    dunce::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl ProtectPlan {
    fn add(&mut self, path: PathBuf, dir: bool) {
        if self.paths.iter().any(|p| p.path == path) {
            return;
        }
        match std::fs::symlink_metadata(&path) {
            Ok(m) => self.paths.push(Protected {
                path,
                dir: m.is_dir(),
                exists: true,
            }),
            Err(_) => {
                // A missing parent: the first missing ancestor is protected
                // instead (as a directory), so nothing can appear below it.
                let mut missing = path.clone();
                while let Some(parent) = missing.parent() {
                    if parent.exists() {
                        break;
                    }
                    missing = parent.to_path_buf();
                }
                let dir = dir || missing != path;
                if !self.paths.iter().any(|p| p.path == missing) {
                    self.paths.push(Protected {
                        path: missing,
                        dir,
                        exists: false,
                    });
                }
            }
        }
    }

    fn add_git_dir(&mut self, git: &Path) {
        if !self.anchors.contains(&git.to_path_buf()) {
            self.anchors.push(git.to_path_buf());
        }
        for name in PROTECTED_GIT {
            let p = git.join(name);
            // config and hooks are protected whether they exist or not;
            // the others matter only when they exist.
            if matches!(*name, "config" | "hooks") || p.exists() {
                self.add(p, *name == "hooks" || *name == "info");
            }
        }
        for sub in ["modules", "worktrees"] {
            let Ok(entries) = std::fs::read_dir(git.join(sub)) else {
                continue;
            };
            for e in entries.flatten() {
                for f in ["config", "config.worktree", "hooks", "commondir", "gitdir"] {
                    let p = e.path().join(f);
                    if p.exists() {
                        self.add(p, f == "hooks");
                    }
                }
            }
        }
    }

    /// Read the plan for `policy` off the file system.
    pub fn of(policy: &SandboxPolicy) -> Self {
        let mut plan = Self::default();
        for root in &policy.projects {
            let root = canonical(root);
            let dot_git = root.join(".git");
            match std::fs::symlink_metadata(&dot_git) {
                Ok(m) if m.is_dir() => plan.add_git_dir(&dot_git),
                // A worktree's `.git` file says where its git dir is: it
                // must not be pointed elsewhere.
                Ok(_) => plan.add(dot_git, false),
                Err(_) => plan.add(dot_git, true),
            }
            for name in PROTECTED_NAMES {
                let p = root.join(name);
                plan.add(p.clone(), is_dir_name(&p));
            }
        }
        for git in &policy.git_dirs {
            plan.add_git_dir(&canonical(git));
        }
        for p in &policy.protect {
            let parent_real = p
                .parent()
                .map(canonical)
                .and_then(|d| p.file_name().map(|n| d.join(n)))
                .unwrap_or_else(|| p.clone());
            // A person's tool that is not set up (no `~/.cache/node` for
            // corepack): nothing of it to protect, and no placeholders in
            // the home directory for it.
            let in_home = policy.homes.iter().any(|h| p.starts_with(h));
            if in_home && !parent_real.parent().is_some_and(Path::exists) {
                continue;
            }
            plan.add(parent_real.clone(), is_dir_name(&parent_real));
        }
        // Only what lies inside a writable root needs protecting.
        let roots: Vec<PathBuf> = policy.writable.iter().map(|w| canonical(w)).collect();
        plan.paths
            .retain(|p| roots.iter().any(|r| p.path.starts_with(r) && p.path != *r));
        plan.anchors
            .retain(|a| roots.iter().any(|r| a.starts_with(r)));
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NetworkAccess, PolicyInputs, SandboxMode};

    fn policy(root: &Path, git: Option<PathBuf>, protect: Vec<PathBuf>) -> SandboxPolicy {
        SandboxPolicy::build(
            SandboxMode::WorkspaceWrite,
            NetworkAccess::Deny,
            PolicyInputs {
                project_root: root.to_path_buf(),
                git_common_dir: git,
                protect,
                ..PolicyInputs::default()
            },
        )
    }

    #[test]
    fn a_checkout_protects_its_git_config_hooks_and_the_named_files() {
        let d = tempfile::tempdir().unwrap();
        let root = canonical(d.path());
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::create_dir_all(root.join(".git/modules/sub")).unwrap();
        std::fs::write(root.join(".git/modules/sub/config"), "").unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        let plan = ProtectPlan::of(&policy(&root, None, vec![root.join("deep/er/x")]));
        let get = |rel: &str| {
            plan.paths
                .iter()
                .find(|p| p.path == root.join(rel))
                .cloned()
        };
        assert!(get(".git/config").unwrap().exists);
        assert!(get(".git/hooks").unwrap().dir);
        assert!(get(".git/modules/sub/config").unwrap().exists);
        assert!(get(".mcp.json").unwrap().exists);
        let vscode = get(".vscode").unwrap();
        assert!(vscode.dir && !vscode.exists);
        let envrc = get(".envrc").unwrap();
        assert!(!envrc.dir && !envrc.exists);
        // A missing parent: its first missing ancestor, as a directory.
        let deep = get("deep").unwrap();
        assert!(deep.dir && !deep.exists);
        assert_eq!(plan.anchors, vec![root.join(".git")]);
        // info/ exists only sometimes: not protected when missing.
        assert!(get(".git/info").is_none());
    }

    #[test]
    fn a_worktree_protects_its_git_file_and_the_common_dirs_config() {
        let d = tempfile::tempdir().unwrap();
        let base = canonical(d.path());
        let main_git = base.join("main/.git");
        std::fs::create_dir_all(main_git.join("hooks")).unwrap();
        std::fs::write(main_git.join("config"), "").unwrap();
        let wt = base.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
        let plan = ProtectPlan::of(&policy(&wt, Some(main_git.clone()), vec![]));
        let git_file = plan
            .paths
            .iter()
            .find(|p| p.path == wt.join(".git"))
            .unwrap();
        assert!(git_file.exists && !git_file.dir);
        assert!(plan.paths.iter().any(|p| p.path == main_git.join("config")));
        assert_eq!(plan.anchors, vec![main_git]);
    }

    #[test]
    fn a_folder_without_git_gets_its_dot_git_protected() {
        let d = tempfile::tempdir().unwrap();
        let root = canonical(d.path());
        let plan = ProtectPlan::of(&policy(&root, None, vec![]));
        let g = plan
            .paths
            .iter()
            .find(|p| p.path == root.join(".git"))
            .unwrap();
        assert!(g.dir && !g.exists);
        assert!(plan.anchors.is_empty());
    }
}
