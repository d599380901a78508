//! Nothing of a person's work is lost by a worktree command.
//!
//! Before `take`, `promote`, `remove`, auto-cleanup or `reset` change or
//! delete anything, [`Worktrees::at_risk`] says what would be lost:
//! uncommitted and untracked files, ignored files that are not regenerable
//! build output and differ from the main checkout's copy, commits only the
//! worktree's branch holds, and submodule commits that exist only in the
//! worktree's own submodule repositories. A command refuses, naming each,
//! unless forced; forced, it first puts them in the trash
//! (`<git common dir>/mia-code/trash/<id>/`: the files, a bundle of the
//! commits, submodule commits kept under `refs/mia-code/trash/<id>/` in
//! the main checkout's submodule repositories), which
//! [`Worktrees::trash_restore`] brings back.
//!
//! One worktree operation per repository at a time: [`RepoLock`].

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{GitError, Result};
use crate::worktree::{WorktreeInfo, Worktrees};

/// Directories of build output and dependencies that a build or an install
/// makes again: not "lost" when a worktree goes.
pub const REGENERABLE_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "dist",
    "build",
    "out",
    ".next",
    ".nuxt",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".gradle",
    ".cache",
    "coverage",
    ".turbo",
    ".parcel-cache",
    ".svelte-kit",
    "vendor",
];

/// What an operation on a worktree would lose.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AtRisk {
    /// Tracked files with uncommitted changes (staged or not).
    pub uncommitted: Vec<String>,
    /// Untracked files (not ignored).
    pub untracked: Vec<String>,
    /// Ignored files that are not regenerable output and differ from (or
    /// are missing in) the main checkout.
    pub ignored: Vec<String>,
    /// Commits only the worktree's branch holds (no other branch, tag or
    /// remote-tracking ref reaches them): (count, the branch's tip).
    pub commits: u32,
    pub tip: Option<String>,
    /// Submodule commits that exist only in this worktree's submodule
    /// repositories: (submodule path, commit).
    pub submodule_commits: Vec<(String, String)>,
}

impl AtRisk {
    pub fn is_empty(&self) -> bool {
        self.uncommitted.is_empty()
            && self.untracked.is_empty()
            && self.ignored.is_empty()
            && self.commits == 0
            && self.submodule_commits.is_empty()
    }

    /// The files to keep a copy of.
    pub fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .uncommitted
            .iter()
            .chain(&self.untracked)
            .chain(&self.ignored)
            .cloned()
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// "2 uncommitted change(s) (a.txt, b.txt) and 1 ignored file (.env)".
    pub fn describe(&self, branch: &str) -> String {
        fn list(v: &[String]) -> String {
            let mut s: Vec<String> = v.iter().take(10).cloned().collect();
            if v.len() > 10 {
                s.push(format!("and {} more", v.len() - 10));
            }
            s.join(", ")
        }
        let mut parts = Vec::new();
        if !self.uncommitted.is_empty() {
            parts.push(format!(
                "{} uncommitted change(s) ({})",
                self.uncommitted.len(),
                list(&self.uncommitted)
            ));
        }
        if !self.untracked.is_empty() {
            parts.push(format!(
                "{} untracked file(s) ({})",
                self.untracked.len(),
                list(&self.untracked)
            ));
        }
        if !self.ignored.is_empty() {
            parts.push(format!(
                "{} ignored file(s) that are not build output ({})",
                self.ignored.len(),
                list(&self.ignored)
            ));
        }
        if self.commits > 0 {
            parts.push(format!("{} commit(s) only {branch} holds", self.commits));
        }
        if !self.submodule_commits.is_empty() {
            let subs: Vec<String> = self
                .submodule_commits
                .iter()
                .map(|(p, c)| format!("{p} at {}", &c[..c.len().min(12)]))
                .collect();
            parts.push(format!(
                "{} submodule commit(s) that exist only in this worktree ({})",
                subs.len(),
                list(&subs)
            ));
        }
        if parts.is_empty() {
            "nothing".into()
        } else {
            parts.join("; ")
        }
    }
}

/// The operation that put an entry in the trash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrashOperation {
    Remove,
    Reset,
    Take,
    Promote,
    AutoCleanup,
}

impl TrashOperation {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Remove => "remove",
            Self::Reset => "reset",
            Self::Take => "take",
            Self::Promote => "promote",
            Self::AutoCleanup => "auto-cleanup",
        }
    }
}

/// One entry of the trash: what a forced operation (or a reset) kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrashEntry {
    pub id: String,
    pub worktree: String,
    pub operation: TrashOperation,
    pub created_at_ms: u64,
    /// Where the files were (the worktree's or the target's root).
    pub root: PathBuf,
    pub files: Vec<String>,
    /// Refs kept in `refs.bundle`: (name, commit).
    pub refs: Vec<(String, String)>,
    /// Submodule commits kept in the main checkout's submodule repositories.
    pub submodule_commits: Vec<(String, String)>,
}

/// An exclusive lock on the repository's worktree operations, released on drop.
pub struct RepoLock {
    _file: File,
}

fn flock(f: &File) -> std::io::Result<()> {
    f.lock()
}

impl Worktrees {
    fn safety_dir(&self) -> PathBuf {
        self.repo.common_dir.join("mia-code")
    }

    /// Wait for, and take, the repository's worktree lock.
    pub fn lock(&self) -> Result<RepoLock> {
        let dir = self.safety_dir();
        std::fs::create_dir_all(&dir).map_err(|e| GitError::io("create", &dir, e))?;
        let path = dir.join("lock");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| GitError::io("open", &path, e))?;
        flock(&file).map_err(|e| GitError::io("lock", &path, e))?;
        Ok(RepoLock { _file: file })
    }

    /// What removing (or resetting) worktree `info` would lose.
    pub fn at_risk(&self, info: &WorktreeInfo) -> Result<AtRisk> {
        let mut risk = AtRisk::default();
        if !info.path.is_dir() {
            // Its files are gone already; its commits may not be.
        } else {
            let git = self.git(&info.path);
            let status = git.ok(&[
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--ignored=traditional",
                "--ignore-submodules=none",
            ])?;
            for entry in status.split('\0').filter(|e| e.len() > 3) {
                let (code, path) = entry.split_at(3);
                let path = path.to_string();
                match code {
                    "?? " => risk.untracked.push(path),
                    "!! " => {
                        if !regenerable(&path) {
                            self.ignored_at_risk(&info.path, &path, &mut risk.ignored);
                        }
                    }
                    _ => risk.uncommitted.push(path),
                }
            }
            risk.submodule_commits = self.submodule_commits_only_here(info)?;
        }
        let branch = self.recorded_branch(info);
        if let Some(b) = &branch {
            let git = self.git(&self.repo.root);
            let exists = git.yes(&[
                "show-ref",
                "--verify",
                "--quiet",
                &format!("refs/heads/{b}"),
            ])?;
            if exists {
                let tip = git
                    .ok(&["rev-parse", &format!("refs/heads/{b}")])?
                    .trim()
                    .to_string();
                let only = git.ok(&[
                    "rev-list",
                    "--count",
                    &tip,
                    "--not",
                    &format!("--exclude={b}"),
                    "--branches",
                    "--tags",
                    "--remotes",
                ])?;
                risk.commits = only.trim().parse().unwrap_or(0);
                if risk.commits > 0 {
                    risk.tip = Some(tip);
                }
            }
        }
        Ok(risk)
    }

    /// An ignored file or directory (`dir/`): at risk unless identical to
    /// the main checkout's copy.
    fn ignored_at_risk(&self, root: &Path, rel: &str, out: &mut Vec<String>) {
        let here = root.join(rel);
        let mut files = Vec::new();
        if rel.ends_with('/') {
            let walk = ignore::WalkBuilder::new(&here)
                .standard_filters(false)
                .hidden(false)
                .build();
            for e in walk.flatten() {
                if e.file_type().is_some_and(|t| t.is_file() || t.is_symlink())
                    && let Ok(r) = e.path().strip_prefix(root)
                    && !r
                        .components()
                        .any(|c| REGENERABLE_DIRS.iter().any(|d| c.as_os_str() == *d))
                {
                    files.push(r.to_string_lossy().to_string());
                }
            }
        } else {
            files.push(rel.to_string());
        }
        for f in files {
            let same = match (
                std::fs::read(root.join(&f)),
                std::fs::read(self.repo.root.join(&f)),
            ) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            };
            if !same {
                out.push(f);
            }
        }
    }

    /// The branch recorded when mia-code made the worktree (`None` for one
    /// it did not make).
    pub fn recorded_branch(&self, info: &WorktreeInfo) -> Option<String> {
        self.read_meta(&info.name)
            .map(|m| m.branch)
            .filter(|b| !b.is_empty())
    }

    /// Commits checked out (or on branches) in this worktree's submodules
    /// that the main checkout's submodule repositories do not have.
    fn submodule_commits_only_here(&self, info: &WorktreeInfo) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        if !info.path.join(".gitmodules").is_file() {
            return Ok(out);
        }
        let git = self.git(&info.path);
        let listed = git
            .ok(&[
                "submodule",
                "foreach",
                "--quiet",
                "--recursive",
                "echo \"$displaypath\"",
            ])
            .unwrap_or_default();
        for sub in listed.lines().map(str::trim).filter(|s| !s.is_empty()) {
            let dir = info.path.join(sub);
            let sg = self.git(&dir);
            let Ok(heads) = sg.ok(&["for-each-ref", "--format=%(objectname)", "refs/heads"]) else {
                continue;
            };
            let mut commits: Vec<String> = heads.lines().map(str::to_string).collect();
            if let Ok(h) = sg.ok(&["rev-parse", "HEAD"]) {
                commits.push(h.trim().to_string());
            }
            commits.sort();
            commits.dedup();
            let main_sub = self.repo.root.join(sub);
            for c in commits.into_iter().filter(|c| !c.is_empty()) {
                let known = main_sub.is_dir()
                    && self
                        .git(&main_sub)
                        .yes(&["cat-file", "-e", &format!("{c}^{{commit}}")])
                        .unwrap_or(false);
                if !known {
                    out.push((sub.to_string(), c));
                }
            }
        }
        Ok(out)
    }

    fn trash_dir(&self) -> PathBuf {
        self.safety_dir().join("trash")
    }

    /// Keep a copy of what `risk` names, before `operation` on `worktree`
    /// (whose files are under `root`) drops it.
    pub fn trash_save(
        &self,
        worktree: &str,
        operation: TrashOperation,
        root: &Path,
        risk: &AtRisk,
    ) -> Result<TrashEntry> {
        let created_at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let id = format!("{created_at_ms}-{worktree}-{}", operation.as_str());
        let dir = self.trash_dir().join(&id);
        let files_dir = dir.join("files");
        std::fs::create_dir_all(&files_dir).map_err(|e| GitError::io("create", &files_dir, e))?;
        let mut files = Vec::new();
        for rel in risk.files() {
            let src = root.join(&rel);
            let Ok(m) = std::fs::symlink_metadata(&src) else {
                continue;
            };
            let dst = files_dir.join(&rel);
            if let Some(p) = dst.parent() {
                std::fs::create_dir_all(p).map_err(|e| GitError::io("create", p, e))?;
            }
            if m.file_type().is_symlink() {
                #[cfg(unix)]
                if let Ok(t) = std::fs::read_link(&src) {
                    std::os::unix::fs::symlink(t, &dst)
                        .map_err(|e| GitError::io("keep", &src, e))?;
                }
            } else if m.is_file() {
                std::fs::copy(&src, &dst).map_err(|e| GitError::io("keep", &src, e))?;
            } else {
                continue;
            }
            files.push(rel);
        }
        let mut refs = Vec::new();
        if let Some(tip) = &risk.tip {
            let name = format!("refs/mia-code/trash/{id}/branch");
            let git = self.git(&self.repo.root);
            git.ok(&["update-ref", &name, tip])?;
            let bundle = dir.join("refs.bundle");
            git.ok(&[
                "bundle",
                "create",
                "--quiet",
                &bundle.to_string_lossy(),
                &name,
            ])?;
            refs.push((name, tip.clone()));
        }
        let mut subs = Vec::new();
        for (sub, commit) in &risk.submodule_commits {
            let main_sub = self.repo.root.join(sub);
            let here = root.join(sub);
            if !main_sub.is_dir() {
                continue;
            }
            let name = format!("refs/mia-code/trash/{id}/{}", commit);
            self.git(&main_sub).ok(&[
                "fetch",
                "--quiet",
                &here.to_string_lossy(),
                &format!("{commit}:{name}"),
            ])?;
            subs.push((sub.clone(), commit.clone()));
        }
        let entry = TrashEntry {
            id,
            worktree: worktree.to_string(),
            operation,
            created_at_ms,
            root: root.to_path_buf(),
            files,
            refs,
            submodule_commits: subs,
        };
        let json =
            serde_json::to_string_pretty(&entry).map_err(|e| GitError::Invalid(e.to_string()))?;
        let meta = dir.join("entry.json");
        std::fs::write(&meta, json).map_err(|e| GitError::io("write", &meta, e))?;
        Ok(entry)
    }

    /// What the trash holds, newest first.
    pub fn trash_list(&self) -> Result<Vec<TrashEntry>> {
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(self.trash_dir()) else {
            return Ok(out);
        };
        for e in entries.flatten() {
            let Ok(text) = std::fs::read_to_string(e.path().join("entry.json")) else {
                continue;
            };
            if let Ok(t) = serde_json::from_str::<TrashEntry>(&text) {
                out.push(t);
            }
        }
        out.sort_by(|a, b| b.created_at_ms.cmp(&a.created_at_ms).then(b.id.cmp(&a.id)));
        Ok(out)
    }

    /// Bring a trash entry back: its files into `into` (default: where they
    /// were, or the main checkout when that is gone), never over a file
    /// that differs; its commits as the branch `mia-code-restored/<id>`.
    pub fn trash_restore(&self, id: &str, into: Option<&Path>) -> Result<(TrashEntry, PathBuf)> {
        let entry = self
            .trash_list()?
            .into_iter()
            .find(|t| t.id == id)
            .ok_or_else(|| {
                GitError::Invalid(format!(
                    "no trash entry {id:?}; `mia-code worktree trash` lists them"
                ))
            })?;
        let dir = self.trash_dir().join(&entry.id);
        let target = match into {
            Some(p) => p.to_path_buf(),
            None if entry.root.is_dir() => entry.root.clone(),
            None => self.repo.root.clone(),
        };
        let mut clashes = Vec::new();
        for rel in &entry.files {
            let src = dir.join("files").join(rel);
            let dst = target.join(rel);
            if let (Ok(a), Ok(b)) = (std::fs::read(&src), std::fs::read(&dst))
                && a != b
            {
                clashes.push(rel.clone());
            }
        }
        if !clashes.is_empty() {
            return Err(GitError::Conflict(format!(
                "nothing was restored: {} would be overwritten in {} ({}); restore --into another directory",
                if clashes.len() == 1 {
                    "a file"
                } else {
                    "files"
                },
                target.display(),
                clashes.join(", ")
            )));
        }
        for rel in &entry.files {
            let src = dir.join("files").join(rel);
            let dst = target.join(rel);
            if let Some(p) = dst.parent() {
                std::fs::create_dir_all(p).map_err(|e| GitError::io("create", p, e))?;
            }
            if std::fs::symlink_metadata(&src).is_ok_and(|m| m.file_type().is_symlink()) {
                #[cfg(unix)]
                if let Ok(t) = std::fs::read_link(&src) {
                    let _ = std::fs::remove_file(&dst);
                    std::os::unix::fs::symlink(t, &dst)
                        .map_err(|e| GitError::io("restore", &dst, e))?;
                }
            } else {
                std::fs::copy(&src, &dst).map_err(|e| GitError::io("restore", &dst, e))?;
            }
        }
        let bundle = dir.join("refs.bundle");
        if bundle.is_file() {
            for (name, _) in &entry.refs {
                let branch = format!("mia-code-restored/{}", entry.id);
                self.git(&self.repo.root).ok(&[
                    "fetch",
                    "--quiet",
                    &bundle.to_string_lossy(),
                    &format!("{name}:refs/heads/{branch}"),
                ])?;
            }
        }
        Ok((entry, target))
    }
}

/// Under a regenerable directory (`node_modules/`, `target/`, ...)?
fn regenerable(rel: &str) -> bool {
    Path::new(rel)
        .components()
        .any(|c| REGENERABLE_DIRS.iter().any(|d| c.as_os_str() == *d))
}
