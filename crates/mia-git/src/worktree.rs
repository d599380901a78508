//! Experiment worktrees (spec 075): one directory and one branch per
//! attempt, created from a chosen base, never touching the main working
//! tree; list with status, remove with what would be lost, reset.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{GitError, Result};
use crate::git::Git;
use crate::names;
use crate::safety::TrashOperation;

/// The user's repository: its main working tree and the shared git directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The main working tree's root (for a linked worktree: the main one's).
    pub root: PathBuf,
    /// The common git directory (`.git` of the main tree).
    pub common_dir: PathBuf,
}

impl Repo {
    /// The repository `dir` is in (from a linked worktree too).
    pub fn discover(dir: &Path) -> Result<Self> {
        let git = Git::new(dir, false);
        let out = git
            .output(&[
                "rev-parse",
                "--path-format=absolute",
                "--git-common-dir",
                "--show-toplevel",
            ])
            .map_err(|_| GitError::NotARepository(dir.to_path_buf()))?;
        if !out.status.success() {
            return Err(GitError::NotARepository(dir.to_path_buf()));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let common = PathBuf::from(lines.next().unwrap_or_default());
        let top = PathBuf::from(lines.next().unwrap_or_default());
        if common.as_os_str().is_empty() || top.as_os_str().is_empty() {
            return Err(GitError::NotARepository(dir.to_path_buf()));
        }
        // The main working tree is the common dir's parent when it is `.git`.
        let root = if common.file_name().is_some_and(|n| n == ".git") {
            common.parent().map_or(top.clone(), Path::to_path_buf)
        } else {
            top
        };
        let canon = |p: PathBuf| dunce::canonicalize(&p).unwrap_or(p);
        Ok(Self {
            root: canon(root),
            common_dir: canon(common),
        })
    }
}

/// `worktree.*` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Where worktrees go: relative to the repository root, or absolute.
    pub directory: PathBuf,
    /// Branch name prefix (`mia-code/`).
    pub branch_prefix: String,
    /// Let the repository's git hooks run (off by default).
    pub run_hooks: bool,
    /// Commands run in a new worktree (`npm install`), in order.
    pub start_scripts: Vec<String>,
    /// Command that checks an attempt (`cargo test`), for comparisons.
    pub check_command: Option<String>,
    /// Remove a worktree once it has been promoted (merged).
    pub auto_cleanup: bool,
    /// `directory` must stay inside the repository, symlinks followed (the
    /// default, and whenever the value came from the project's own config);
    /// `false` only for a directory the person chose in their global config.
    pub contained: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            directory: PathBuf::from(".mia-code/worktrees"),
            branch_prefix: "mia-code/".into(),
            run_hooks: false,
            start_scripts: Vec::new(),
            check_command: None,
            auto_cleanup: true,
            contained: true,
        }
    }
}

/// What is recorded about a worktree when it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub name: String,
    pub branch: String,
    /// The commit it started from.
    pub base: String,
    /// The branch that commit was the tip of, when it was one (`main`).
    pub base_ref: Option<String>,
    pub created_at_ms: u64,
}

/// A mia-code worktree and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeInfo {
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    pub base: String,
    pub base_ref: Option<String>,
    pub head: String,
    pub created_at_ms: u64,
    pub size_bytes: u64,
    /// Uncommitted changes (paths), capped at 200.
    pub dirty: Vec<String>,
    /// Commits on its branch that the base branch does not have.
    pub ahead: u32,
    /// What removing it would lose, said for a person (`None`: nothing;
    /// filled by [`Worktrees::list`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub would_lose: Option<String>,
    /// Nothing would be lost by removing it: clean, and merged into its base
    /// branch (or no commits of its own).
    pub merged: bool,
    /// Whether it is as mia-code made it: `ok`, `branch-changed` (another
    /// branch is checked out there now), `missing` (its directory is gone).
    #[serde(default)]
    pub state: WorktreeState,
    /// The branch mia-code made it on (the one its commands act on).
    #[serde(default)]
    pub recorded_branch: String,
}

/// [`WorktreeInfo::state`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorktreeState {
    #[default]
    Ok,
    BranchChanged,
    Missing,
}

/// One line of a start script's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptLine {
    /// The worktree it runs in (set by `create`; empty for a bare `run_script`).
    pub worktree: String,
    pub script: String,
    pub line: String,
    pub stderr: bool,
}

/// How a start or check script ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptResult {
    pub command: String,
    /// `None`: killed (cancelled or timed out).
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub duration_ms: u64,
    /// The last 64 KiB of its output (stdout and stderr interleaved).
    pub output: String,
}

impl ScriptResult {
    pub fn ok(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// What `create` made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Created {
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    pub base: String,
    pub head: String,
    /// Ignored files copied in because `.worktreeinclude` lists them.
    pub included: Vec<String>,
    pub submodules: bool,
    pub scripts: Vec<ScriptResult>,
}

/// Options of `create`.
#[derive(Debug, Clone, Default)]
pub struct CreateOptions {
    pub name: Option<String>,
    /// A ref (`main`, `v1.2`, a commit), `default` for the remote's default
    /// branch; `None`: the current HEAD.
    pub base: Option<String>,
}

/// Called with each output line of a script.
pub type OnLine<'a> = &'a mut dyn FnMut(&ScriptLine);

/// Set to cancel a running script (checked every 100 ms).
pub type Cancel = std::sync::Arc<std::sync::atomic::AtomicBool>;

/// The worktrees of one repository.
#[derive(Clone)]
pub struct Worktrees {
    pub repo: Repo,
    pub settings: Settings,
    /// How scripts (start scripts, the check command) are confined, by the
    /// directory they run in (`None`: unconfined).
    pub confine: Option<ScriptConfinement>,
    /// What a long-lived caller knows of changes in attempts between
    /// comparisons (`None`: every comparison scans).
    pub changes: Option<std::sync::Arc<dyn crate::ChangeFeed>>,
}

impl std::fmt::Debug for Worktrees {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worktrees")
            .field("repo", &self.repo)
            .field("settings", &self.settings)
            .field("confined", &self.confine.is_some())
            .field("fed", &self.changes.is_some())
            .finish()
    }
}

/// The sandbox a script running in a directory gets.
pub type ScriptConfinement =
    std::sync::Arc<dyn Fn(&Path) -> mia_sandbox::Confinement + Send + Sync>;

const MAX_DIRTY: usize = 200;
const OUTPUT_TAIL: usize = 64 * 1024;

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Worktrees {
    pub fn new(repo: Repo, settings: Settings) -> Self {
        Self {
            repo,
            settings,
            confine: None,
            changes: None,
        }
    }

    /// Compare attempts with what `feed` knows of their changes.
    pub fn with_changes(mut self, feed: std::sync::Arc<dyn crate::ChangeFeed>) -> Self {
        self.changes = Some(feed);
        self
    }

    /// Run scripts in the OS sandbox `confine` gives for their directory.
    pub fn with_confinement(mut self, confine: ScriptConfinement) -> Self {
        self.confine = Some(confine);
        self
    }

    /// The directory worktrees are created in.
    pub fn dir(&self) -> PathBuf {
        if self.settings.directory.is_absolute() {
            self.settings.directory.clone()
        } else {
            self.repo.root.join(&self.settings.directory)
        }
    }

    /// [`Worktrees::dir`], refused when it must stay inside the repository
    /// and does not: `..`, an absolute path, or a symlinked component
    /// (`.mia-code -> ..` committed by the project) leading out.
    fn checked_dir(&self) -> Result<PathBuf> {
        let dir = self.dir();
        if !self.settings.contained {
            return Ok(dir);
        }
        let shown = self.settings.directory.display();
        let bad = |why: &str| {
            GitError::Invalid(format!(
                "worktree.directory `{shown}` {why}: it must stay inside the repository (a relative path like `.mia-code/worktrees`); set another in your global config if you want worktrees elsewhere"
            ))
        };
        if !self.settings.directory.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        }) {
            return Err(bad("leaves the repository"));
        }
        // The longest part that exists, symlinks resolved, must be inside.
        let mut existing = dir.as_path();
        while !existing.exists() {
            match existing.parent() {
                Some(p) => existing = p,
                None => break,
            }
        }
        let real =
            dunce::canonicalize(existing).map_err(|e| GitError::io("resolve", existing, e))?;
        if !real.starts_with(&self.repo.root) {
            return Err(bad(&format!(
                "resolves to {} through a symlink",
                real.display()
            )));
        }
        Ok(dir)
    }

    fn meta_dir(&self) -> PathBuf {
        self.repo.common_dir.join("mia-code").join("worktrees")
    }

    fn meta_path(&self, name: &str) -> PathBuf {
        self.meta_dir().join(format!("{name}.json"))
    }

    pub(crate) fn git<'a>(&self, dir: &'a Path) -> Git<'a> {
        Git::new(dir, self.settings.run_hooks)
    }

    fn root_git(&self) -> Git<'_> {
        self.git(&self.repo.root)
    }

    pub(crate) fn read_meta(&self, name: &str) -> Option<Meta> {
        let text = std::fs::read_to_string(self.meta_path(name)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Resolve a base: `None` → HEAD, `default` → the remote's default branch.
    fn resolve_base(&self, base: Option<&str>) -> Result<(String, Option<String>)> {
        let git = self.root_git();
        let (reference, branch) = match base {
            None => {
                let branch = git
                    .ok(&["symbolic-ref", "--quiet", "--short", "HEAD"])
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty());
                ("HEAD".to_string(), branch)
            }
            Some("default") => {
                let head = git
                    .ok(&["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"])
                    .map_err(|_| GitError::BadRef {
                        reference: "default".into(),
                        why: "the remote `origin` has no default branch (run `git remote set-head origin --auto`)".into(),
                    })?;
                let head = head.trim().to_string();
                // `origin/main` is not a branch to merge into; `main` is, when it exists here.
                let local = head.split_once('/').map(|(_, b)| b.to_string());
                let branch = match local {
                    Some(b)
                        if git.yes(&[
                            "show-ref",
                            "--verify",
                            "--quiet",
                            &format!("refs/heads/{b}"),
                        ])? =>
                    {
                        Some(b)
                    }
                    _ => None,
                };
                (head, branch)
            }
            Some(r) => {
                let is_branch = git.yes(&[
                    "show-ref",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{r}"),
                ])?;
                (r.to_string(), is_branch.then(|| r.to_string()))
            }
        };
        if reference.starts_with('-') {
            return Err(GitError::BadRef {
                reference,
                why: "a ref cannot start with `-`".into(),
            });
        }
        let out = git.output(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{reference}^{{commit}}"),
        ])?;
        if !out.status.success() {
            return Err(GitError::BadRef {
                reference: reference.clone(),
                why: if reference == "HEAD" {
                    "the repository has no commit yet: commit once first".into()
                } else {
                    "no branch, tag or commit by that name".into()
                },
            });
        }
        Ok((
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            branch,
        ))
    }

    fn branch_exists(&self, branch: &str) -> Result<bool> {
        self.root_git().yes(&[
            "show-ref",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ])
    }

    /// Registered worktrees: (path, head, branch).
    pub(crate) fn registered(&self) -> Result<Vec<(PathBuf, String, Option<String>)>> {
        let text = self
            .root_git()
            .ok(&["worktree", "list", "--porcelain", "-z"])?;
        let mut out = Vec::new();
        let mut path: Option<PathBuf> = None;
        let mut head = String::new();
        let mut branch: Option<String> = None;
        for field in text.split('\0') {
            if field.is_empty() {
                if let Some(p) = path.take() {
                    out.push((p, std::mem::take(&mut head), branch.take()));
                }
                continue;
            }
            if let Some(p) = field.strip_prefix("worktree ") {
                path = Some(
                    dunce::canonicalize(PathBuf::from(p)).unwrap_or_else(|_| PathBuf::from(p)),
                );
            } else if let Some(h) = field.strip_prefix("HEAD ") {
                head = h.to_string();
            } else if let Some(b) = field.strip_prefix("branch ") {
                branch = Some(b.trim_start_matches("refs/heads/").to_string());
            }
        }
        if let Some(p) = path.take() {
            out.push((p, head, branch));
        }
        Ok(out)
    }

    /// Make a new worktree. Collisions of name, branch, directory or a
    /// registered worktree are errors that say which.
    pub fn create(
        &self,
        opts: &CreateOptions,
        cancel: &Cancel,
        on_line: OnLine<'_>,
    ) -> Result<Created> {
        let (base, base_ref) = self.resolve_base(opts.base.as_deref())?;
        let dir = self.checked_dir()?;
        let registered = self.registered()?;
        let taken = |name: &str| -> Result<Option<String>> {
            let branch = format!("{}{name}", self.settings.branch_prefix);
            let path = dir.join(name);
            if self.branch_exists(&branch)? {
                return Ok(Some(format!("branch {branch} already exists")));
            }
            if self.branch_exists(name)? {
                return Ok(Some(format!(
                    "{name} is the name of an existing branch (a worktree named after it would be taken for it)"
                )));
            }
            if path.exists() {
                return Ok(Some(format!("directory {} already exists", path.display())));
            }
            let canon = dunce::canonicalize(&path).unwrap_or(path.clone());
            if registered.iter().any(|(p, _, _)| *p == canon || *p == path) {
                return Ok(Some(format!(
                    "a worktree is already registered at {}",
                    path.display()
                )));
            }
            Ok(None)
        };
        let name = match &opts.name {
            Some(n) => {
                names::check_name(n).map_err(|why| GitError::InvalidName {
                    name: n.clone(),
                    why,
                })?;
                if let Some(why) = taken(n)? {
                    return Err(GitError::Conflict(format!(
                        "cannot create worktree {n:?}: {why}; choose another --name"
                    )));
                }
                n.clone()
            }
            None => {
                let mut found = None;
                for _ in 0..10 {
                    let n = names::random_name();
                    if taken(&n)?.is_none() {
                        found = Some(n);
                        break;
                    }
                }
                match found {
                    Some(n) => n,
                    None => {
                        let stem = names::random_name();
                        let mut k = 2;
                        loop {
                            let n = format!("{stem}-{k}");
                            if taken(&n)?.is_none() {
                                break n;
                            }
                            k += 1;
                        }
                    }
                }
            }
        };
        let branch = format!("{}{name}", self.settings.branch_prefix);
        let path = dir.join(&name);
        self.prepare_dir(&dir)?;
        let path_s = path.to_string_lossy().to_string();
        // The record first: a worktree without one is not mia-code's (never
        // listed, never removed), so a crash must not leave one behind.
        let meta = Meta {
            name: name.clone(),
            branch: branch.clone(),
            base: base.clone(),
            base_ref,
            created_at_ms: now_ms(),
        };
        std::fs::create_dir_all(self.meta_dir())
            .map_err(|e| GitError::io("create", self.meta_dir(), e))?;
        let json =
            serde_json::to_string_pretty(&meta).map_err(|e| GitError::Invalid(e.to_string()))?;
        std::fs::write(self.meta_path(&name), json)
            .map_err(|e| GitError::io("write", self.meta_path(&name), e))?;
        if let Err(e) = self
            .root_git()
            .ok(&["worktree", "add", "--quiet", "-b", &branch, &path_s, &base])
        {
            let _ = std::fs::remove_file(self.meta_path(&name));
            return Err(e);
        }
        let path = dunce::canonicalize(&path).unwrap_or(path);
        let submodules = path.join(".gitmodules").is_file();
        if submodules {
            self.git(&path).ok(&[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "--quiet",
                "update",
                "--init",
                "--recursive",
            ])?;
        }
        let included = self.copy_included(&path)?;
        let mut scripts = Vec::new();
        for s in &self.settings.start_scripts {
            let confine = self.confine.as_ref().map(|f| f(&path));
            let r = run_script(
                s,
                &path,
                None,
                cancel,
                confine.as_ref(),
                &mut |l: &ScriptLine| {
                    let mut l = l.clone();
                    l.worktree = name.clone();
                    on_line(&l);
                },
            )?;
            let stop = !r.ok();
            scripts.push(r);
            if stop {
                break;
            }
        }
        let head = self.head(&path)?;
        Ok(Created {
            name,
            path,
            branch,
            base,
            head,
            included,
            submodules,
            scripts,
        })
    }

    /// The worktrees directory exists and, inside the repository, ignores
    /// itself (the main tree never sees the attempts as untracked files).
    fn prepare_dir(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| GitError::io("create", dir, e))?;
        let canon = dunce::canonicalize(dir).unwrap_or(dir.to_path_buf());
        if canon.starts_with(&self.repo.root) {
            let ignore = dir.join(".gitignore");
            if !ignore.exists() {
                std::fs::write(&ignore, "# mia-code experiment worktrees\n*\n")
                    .map_err(|e| GitError::io("write", &ignore, e))?;
            }
        }
        Ok(())
    }

    /// Copy the ignored files `.worktreeinclude` names (gitignore syntax)
    /// from the main tree into `dest`.
    fn copy_included(&self, dest: &Path) -> Result<Vec<String>> {
        let file = self.repo.root.join(".worktreeinclude");
        if !file.is_file() {
            return Ok(Vec::new());
        }
        let mut b = ignore::gitignore::GitignoreBuilder::new(&self.repo.root);
        if let Some(e) = b.add(&file) {
            return Err(GitError::Invalid(format!("{}: {e}", file.display())));
        }
        let matcher = b
            .build()
            .map_err(|e| GitError::Invalid(format!("{}: {e}", file.display())))?;
        let listed = self.root_git().ok(&[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
        ])?;
        let wt_dir = self.dir();
        let mut copied = Vec::new();
        for rel in listed.split('\0').filter(|s| !s.is_empty()) {
            let src = self.repo.root.join(rel);
            if src.starts_with(&wt_dir) || !src.is_file() {
                continue;
            }
            if !matcher.matched_path_or_any_parents(rel, false).is_ignore() {
                continue;
            }
            let to = dest.join(rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(|e| GitError::io("create", parent, e))?;
            }
            std::fs::copy(&src, &to).map_err(|e| GitError::io("copy", &src, e))?;
            copied.push(rel.to_string());
        }
        copied.sort();
        Ok(copied)
    }

    fn head(&self, path: &Path) -> Result<String> {
        Ok(self
            .git(path)
            .ok(&["rev-parse", "HEAD"])?
            .trim()
            .to_string())
    }

    /// The mia-code worktrees (those under [`Worktrees::dir`]), oldest first.
    pub fn list(&self) -> Result<Vec<WorktreeInfo>> {
        let mut list = self.list_records()?;
        // What removing each would lose, in full (ignored files, commits
        // only its branch holds, submodule commits): `merged` means that
        // is nothing.
        for info in &mut list {
            let risk = self.at_risk(info)?;
            if !risk.is_empty() {
                info.would_lose = Some(risk.describe(&info.recorded_branch));
                info.merged = false;
            }
        }
        Ok(list)
    }

    /// The worktrees mia-code made, without the full loss check.
    fn list_records(&self) -> Result<Vec<WorktreeInfo>> {
        let dir = self.checked_dir()?;
        let dir = dunce::canonicalize(&dir).unwrap_or(dir);
        let mut out = Vec::new();
        for (path, head, branch) in self.registered()? {
            if !path.starts_with(&dir) || path == dir {
                continue;
            }
            let Some(name) = path.file_name().map(|n| n.to_string_lossy().to_string()) else {
                continue;
            };
            // Only what mia-code made (it wrote the record): a person's own
            // worktree that happens to sit in this directory is not ours to
            // list, reset, promote or remove.
            if self.read_meta(&name).is_none() {
                continue;
            }
            out.push(self.info(&name, &path, head, branch)?);
        }
        out.sort_by_key(|w| w.created_at_ms);
        Ok(out)
    }

    /// One worktree by name.
    pub fn get(&self, name: &str) -> Result<WorktreeInfo> {
        self.list_records()?
            .into_iter()
            .find(|w| w.name == name)
            .ok_or_else(|| GitError::NotFound(name.to_string()))
    }

    fn info(
        &self,
        name: &str,
        path: &Path,
        head: String,
        branch: Option<String>,
    ) -> Result<WorktreeInfo> {
        let meta = self.read_meta(name);
        let recorded_branch = meta.as_ref().map(|m| m.branch.clone()).unwrap_or_default();
        if !path.is_dir() {
            // Moved or deleted by hand: reported, and the others still work.
            return Ok(WorktreeInfo {
                name: name.to_string(),
                path: path.to_path_buf(),
                branch: branch.unwrap_or_default(),
                base: meta.as_ref().map(|m| m.base.clone()).unwrap_or_default(),
                base_ref: meta.as_ref().and_then(|m| m.base_ref.clone()),
                head,
                created_at_ms: meta.as_ref().map_or(0, |m| m.created_at_ms),
                size_bytes: 0,
                dirty: Vec::new(),
                ahead: 0,
                merged: false,
                would_lose: None,
                state: WorktreeState::Missing,
                recorded_branch,
            });
        }
        let git = self.git(path);
        let status = git.ok(&["status", "--porcelain", "-z", "--untracked-files=all"])?;
        let dirty: Vec<String> = status
            .split('\0')
            .filter_map(|s| s.get(3..).filter(|p| !p.is_empty()))
            .map(str::to_string)
            .take(MAX_DIRTY)
            .collect();
        let base = meta.as_ref().map(|m| m.base.clone()).unwrap_or_default();
        let base_ref = meta.as_ref().and_then(|m| m.base_ref.clone());
        let against = base_ref.clone().unwrap_or_else(|| base.clone());
        // Unknown (no metadata, or the base branch was renamed or deleted)
        // counts as unmerged: removing it must not drop commits silently.
        let counted: Option<u32> = if against.is_empty() {
            None
        } else {
            git.ok(&["rev-list", "--count", &format!("{against}..HEAD")])
                .ok()
                .and_then(|s| s.trim().parse().ok())
        };
        let ahead = counted.unwrap_or(0);
        let created_at_ms = meta.as_ref().map_or_else(
            || {
                std::fs::metadata(path)
                    .and_then(|m| m.created().or_else(|_| m.modified()))
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_millis() as u64)
            },
            |m| m.created_at_ms,
        );
        let branch = branch.unwrap_or_default();
        let state = if !recorded_branch.is_empty() && branch != recorded_branch {
            WorktreeState::BranchChanged
        } else {
            WorktreeState::Ok
        };
        Ok(WorktreeInfo {
            name: name.to_string(),
            path: path.to_path_buf(),
            branch,
            base,
            base_ref,
            head,
            created_at_ms,
            size_bytes: dir_size(path),
            merged: dirty.is_empty() && counted == Some(0),
            would_lose: None,
            dirty,
            ahead,
            state,
            recorded_branch,
        })
    }

    /// Remove a worktree, the branch mia-code made it on and git's record
    /// of it. What would be lost ([`Worktrees::at_risk`]: uncommitted,
    /// untracked and ignored files that are not build output, commits only
    /// its branch holds, submodule commits only it has) keeps it, unless
    /// `force`, which first puts those in the trash. A worktree whose branch
    /// was changed by hand is never removed with that branch.
    pub fn remove(
        &self,
        name: &str,
        force: bool,
    ) -> Result<(WorktreeInfo, Option<crate::TrashEntry>)> {
        let _lock = self.lock()?;
        self.remove_locked(name, force, TrashOperation::Remove)
    }

    pub(crate) fn remove_locked(
        &self,
        name: &str,
        force: bool,
        operation: TrashOperation,
    ) -> Result<(WorktreeInfo, Option<crate::TrashEntry>)> {
        let info = self.get(name)?;
        if info.state == WorktreeState::BranchChanged && !force {
            return Err(GitError::WouldLose(format!(
                "worktree {name} was kept: {} is checked out there now, not {} (the branch mia-code made it on); commands act only on {}; remove it yourself, or pass --force (your branch {} is never deleted)",
                info.branch, info.recorded_branch, info.recorded_branch, info.branch
            )));
        }
        if info.state == WorktreeState::Missing && !force {
            return Err(GitError::WouldLose(format!(
                "worktree {name} was kept: its directory {} is gone (moved or deleted by hand); if you moved it, run `git worktree repair <its new path>`; to forget it and its branch, pass --force (commits only its branch holds go to the trash first)",
                info.path.display()
            )));
        }
        let risk = self.at_risk(&info)?;
        if !risk.is_empty() && !force {
            return Err(GitError::WouldLose(format!(
                "worktree {name} was kept: removing it would lose {}; promote it, or pass --force (a copy goes to the trash: `mia-code worktree trash`)",
                risk.describe(&info.recorded_branch)
            )));
        }
        let trash = if risk.is_empty() {
            None
        } else {
            Some(self.trash_save(name, operation, &info.path, &risk)?)
        };
        if info.path.is_dir() {
            let path = info.path.to_string_lossy().to_string();
            self.root_git()
                .ok(&["worktree", "remove", "--force", &path])?;
        } else {
            // Gone by hand: drop git's record of this one worktree only
            // (never a blanket prune: a person's moved worktree keeps its).
            self.forget_admin_dir(&info.path);
        }
        let recorded = &info.recorded_branch;
        if !recorded.is_empty()
            && self.branch_exists(recorded)?
            && !self
                .registered()?
                .iter()
                .any(|(_, _, b)| b.as_deref() == Some(recorded.as_str()))
        {
            self.root_git().ok(&["branch", "-D", recorded])?;
        }
        let _ = std::fs::remove_file(self.meta_path(name));
        let _ = std::fs::remove_file(self.check_log(name));
        self.forget_attempt(name, &info.path);
        Ok((info, trash))
    }

    /// Remove git's record of the worktree that was at `path` (its directory
    /// is gone).
    fn forget_admin_dir(&self, path: &Path) {
        let Ok(entries) = std::fs::read_dir(self.repo.common_dir.join("worktrees")) else {
            return;
        };
        let want = path.join(".git");
        for e in entries.flatten() {
            let Ok(text) = std::fs::read_to_string(e.path().join("gitdir")) else {
                continue;
            };
            if Path::new(text.trim()) == want {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// Back to its base: uncommitted changes and its own commits dropped
    /// (spec 075), after a copy of them went to the trash.
    pub fn reset(&self, name: &str) -> Result<(WorktreeInfo, Option<crate::TrashEntry>)> {
        let _lock = self.lock()?;
        let info = self.get(name)?;
        if info.base.is_empty() {
            return Err(GitError::Invalid(format!(
                "worktree {name} has no recorded base (it was not made by mia-code)"
            )));
        }
        match info.state {
            WorktreeState::Missing => {
                return Err(GitError::Invalid(format!(
                    "worktree {name}'s directory {} is gone; `mia-code worktree remove {name}` forgets it",
                    info.path.display()
                )));
            }
            WorktreeState::BranchChanged => {
                return Err(GitError::WouldLose(format!(
                    "worktree {name} was not reset: {} is checked out there now, not {}; reset acts only on the branch mia-code made",
                    info.branch, info.recorded_branch
                )));
            }
            WorktreeState::Ok => {}
        }
        let risk = self.at_risk(&info)?;
        let trash = if risk.is_empty() {
            None
        } else {
            Some(self.trash_save(name, TrashOperation::Reset, &info.path, &risk)?)
        };
        let git = self.git(&info.path);
        git.ok(&["reset", "--quiet", "--hard", &info.base])?;
        git.ok(&["clean", "-fdq"])?;
        Ok((self.get(name)?, trash))
    }

    pub(crate) fn check_log(&self, name: &str) -> PathBuf {
        self.meta_dir().join(format!("{name}.check.log"))
    }

    /// Run `worktree.checkCommand` in a worktree (or `main`); output kept.
    pub fn check(&self, name: &str, cancel: &Cancel, on_line: OnLine<'_>) -> Result<ScriptResult> {
        let Some(cmd) = self.settings.check_command.clone() else {
            return Err(GitError::Invalid(
                "no check command: set `worktree.checkCommand` (e.g. \"cargo test\")".into(),
            ));
        };
        let path = self.attempt_path(name)?;
        let confine = self.confine.as_ref().map(|f| f(&path));
        let r = run_script(
            &cmd,
            &path,
            Some(Duration::from_secs(30 * 60)),
            cancel,
            confine.as_ref(),
            on_line,
        )?;
        let _ = std::fs::create_dir_all(self.meta_dir());
        let _ = std::fs::write(
            self.check_log(name),
            serde_json::to_string(&r).unwrap_or_default(),
        );
        Ok(r)
    }

    /// The last check result of a worktree, if any.
    pub fn last_check(&self, name: &str) -> Option<ScriptResult> {
        let text = std::fs::read_to_string(self.check_log(name)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The directory of an attempt: a worktree name, or `main`.
    pub fn attempt_path(&self, name: &str) -> Result<PathBuf> {
        if name == "main" {
            return Ok(self.repo.root.clone());
        }
        Ok(self.locate(name)?.0)
    }

    /// A worktree's path, head and recorded metadata, without the status
    /// work of [`Worktrees::get`] (no `git status`, no size walk).
    pub(crate) fn locate(&self, name: &str) -> Result<(PathBuf, String, Option<Meta>)> {
        self.locate_in(&self.registered()?, name)
    }

    /// [`locate`](Self::locate) in a list of registered worktrees already
    /// read (one `git worktree list` for several lookups).
    pub(crate) fn locate_in(
        &self,
        registered: &[(PathBuf, String, Option<String>)],
        name: &str,
    ) -> Result<(PathBuf, String, Option<Meta>)> {
        let dir = self.checked_dir()?;
        let dir = dunce::canonicalize(&dir).unwrap_or(dir);
        registered
            .iter()
            .find(|(p, _, _)| {
                p.parent() == Some(dir.as_path()) && p.file_name().is_some_and(|n| n == name)
            })
            .map(|(p, head, _)| (p.clone(), head.clone(), self.read_meta(name)))
            .ok_or_else(|| GitError::NotFound(name.to_string()))
    }
}

/// Bytes of the files under `dir` (its `.git` file and directories left out).
fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if e.file_name() == ".git" {
                continue;
            }
            if t.is_dir() {
                stack.push(e.path());
            } else if let Ok(m) = e.metadata() {
                total += m.len();
            }
        }
    }
    total
}

/// Run `command` with `sh -c` in `dir` (in the OS sandbox `confine` says,
/// when given), streaming its lines to `on_line`; the whole process group
/// is killed on cancel or timeout.
pub fn run_script(
    command: &str,
    dir: &Path,
    timeout: Option<Duration>,
    cancel: &Cancel,
    confine: Option<&mia_sandbox::Confinement>,
    on_line: OnLine<'_>,
) -> Result<ScriptResult> {
    use std::process::{Command, Stdio};
    let start = std::time::Instant::now();
    let (mut cmd, guard) = match confine {
        Some(c) => {
            let p = c.prepare("sh", &["-c", command]).map_err(|e| {
                GitError::Invalid(format!("the script `{command}` did not run: {e}"))
            })?;
            (p.command, Some(p.guard))
        }
        None => {
            let mut c = Command::new("sh");
            c.args(["-c", command]);
            (c, None)
        }
    };
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| GitError::io("start the script in", dir, e))?;
    // Its network (through the proxy) and protected paths, until it ends.
    let _running = match (confine, guard) {
        (Some(c), Some(g)) => Some(c.started(g, Some(child.id()))),
        _ => None,
    };
    let (tx, rx) = std::sync::mpsc::channel::<(bool, String)>();
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(|l| l.ok()) {
                let _ = tx.send((false, line));
            }
        }));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            for line in std::io::BufReader::new(err).lines().map_while(|l| l.ok()) {
                let _ = tx.send((true, line));
            }
        }));
    }
    drop(tx);
    let mut output = String::new();
    let mut cancelled = false;
    let mut killed = false;
    let kill = |child: &mut std::process::Child| {
        // The script's whole process group (it was started as its leader).
        #[cfg(unix)]
        if let Ok(pid) = i32::try_from(child.id())
            && pid > 1
        {
            use nix::sys::signal::{Signal, killpg};
            let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = child.kill();
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((stderr, line)) => {
                output.push_str(&line);
                output.push('\n');
                if output.len() > OUTPUT_TAIL * 2 {
                    let cut = output.len() - OUTPUT_TAIL;
                    let cut = (cut..output.len())
                        .find(|&i| output.is_char_boundary(i))
                        .unwrap_or(cut);
                    output.drain(..cut);
                }
                let l = ScriptLine {
                    worktree: String::new(),
                    script: command.to_string(),
                    line,
                    stderr,
                };
                on_line(&l);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if cancel.load(std::sync::atomic::Ordering::Relaxed) && !killed {
            cancelled = true;
            killed = true;
            kill(&mut child);
        }
        if let Some(t) = timeout
            && start.elapsed() > t
            && !killed
        {
            killed = true;
            kill(&mut child);
        }
    }
    for r in readers {
        let _ = r.join();
    }
    let status = child
        .wait()
        .map_err(|e| GitError::io("wait for the script in", dir, e))?;
    if output.len() > OUTPUT_TAIL {
        let cut = output.len() - OUTPUT_TAIL;
        let cut = (cut..output.len())
            .find(|&i| output.is_char_boundary(i))
            .unwrap_or(cut);
        output.drain(..cut);
    }
    Ok(ScriptResult {
        command: command.to_string(),
        exit_code: if killed { None } else { status.code() },
        cancelled,
        duration_ms: start.elapsed().as_millis() as u64,
        output,
    })
}

/// For the root of a linked worktree (its `.git` is a file pointing into
/// `<repo>/.git/worktrees/<id>`), the main working tree's root; `None` for
/// anything else (a main tree, a submodule, a non-git folder). Reads two
/// small files, runs no git.
pub fn main_root_of(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join(".git")).ok()?;
    let gitdir = text.trim().strip_prefix("gitdir:")?.trim();
    let gitdir = if Path::new(gitdir).is_absolute() {
        PathBuf::from(gitdir)
    } else {
        dir.join(gitdir)
    };
    let worktrees = gitdir.parent()?;
    if worktrees.file_name()? != "worktrees" {
        return None;
    }
    // As git checks: the admin directory exists and points back at this
    // `.git` file (a `.git` file naming another repository gains nothing).
    let back = std::fs::read_to_string(gitdir.join("gitdir")).ok()?;
    let back = PathBuf::from(back.trim());
    let here = dir.join(".git");
    let same = |a: &Path, b: &Path| match (dunce::canonicalize(a), dunce::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    if !same(&back, &here) {
        return None;
    }
    let common = worktrees.parent()?;
    if common.file_name()? != ".git" {
        return None;
    }
    let root = common.parent()?;
    Some(dunce::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()))
}

/// The commit checked out in `dir` (a main tree or a linked worktree).
pub fn head_commit(dir: &Path) -> Result<String> {
    let out = Git::new(dir, false).ok(&["rev-parse", "--verify", "HEAD^{commit}"])?;
    Ok(out.trim().to_string())
}
