//! The hidden snapshot repository of one project: opening, the cross-process
//! lock, the "latest snapshot" pointer and the few git CLI calls (gc).

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use git2::{Oid, Repository, RepositoryInitOptions};

use crate::cache::StatCache;
use crate::config::SnapshotConfig;
use crate::error::{Result, SnapshotError};

/// Where snapshot stores used to live inside a project (migrated on open).
pub const LEGACY_SNAPSHOT_DIR: &str = ".mia-code/snapshots";
pub(crate) const MIA_DIR: &str = ".mia-code";
/// The store's shared lock: captures hold it shared, gc and migration exclusively.
const STORE_LOCK: &str = "store.lock";
/// A work tree's exclusive lock for captures and restores.
const LOCK_FILE: &str = "lock";
/// Held by a step whose paths are not known (bash) from its "before" to
/// its "after" snapshot, so two such steps never overlap on one work tree.
const SCAN_LOCK: &str = "scan.lock";
const LATEST_FILE: &str = "latest";
const CACHE_FILE: &str = "statcache";
/// Refs of the snapshots a session took: `refs/mia/s/<session>/<tree>`.
pub(crate) const REF_SESSIONS: &str = "refs/mia/s/";
/// Refs of captures without a session (CLI, pre-restore snapshots).
pub(crate) const REF_CLI: &str = "refs/mia/cli/";
/// Refs migrated from an in-project store (`refs/mia/snapshots/<tree>`).
pub(crate) const REF_LEGACY: &str = "refs/mia/snapshots/";
/// Per work tree: `refs/mia/w/<key>/{latest,scan,scan-saved}`.
pub(crate) const REF_WORKTREES: &str = "refs/mia/w/";

/// The snapshot engine for one work tree of a project. The object store
/// lives outside the work tree, at `<store root>/<project key>/repo`, shared
/// by every work tree of the same git repository; each work tree has its
/// own state directory (latest snapshot, stat cache, lock, journal, backups).
/// Not `Sync`: one owner drives it; other processes are kept out by file
/// locks held for the length of each operation.
pub struct SnapshotRepo {
    pub(crate) project: PathBuf,
    /// The bare git repository (objects and refs).
    pub(crate) dir: PathBuf,
    /// `<store root>/<project key>`.
    pub(crate) store: PathBuf,
    /// `<store>/worktrees/<work tree key>`.
    pub(crate) state: PathBuf,
    /// The work tree key (names its refs).
    pub(crate) wt: String,
    pub(crate) repo: Repository,
    pub(crate) config: SnapshotConfig,
    pub(crate) cache: Option<StatCache>,
}

impl std::fmt::Debug for SnapshotRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotRepo")
            .field("project", &self.project)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// Held while an operation runs; released on drop (and by the OS if the
/// process dies, so a crash never leaves a lock that blocks forever).
#[derive(Debug)]
pub struct RepoLock {
    _store: File,
    file: File,
}

impl Drop for RepoLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// The store's exclusive lock (gc, migration): no capture runs meanwhile.
#[derive(Debug)]
pub(crate) struct StoreLock {
    file: File,
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Held by a step with unknown paths for its whole length (see
/// [`SnapshotRepo::begin_step`]).
#[derive(Debug)]
pub struct StepLock {
    file: File,
    path: PathBuf,
}

impl StepLock {
    /// The lock file (names the work tree it belongs to).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StepLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// How long an operation waits for a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LockKind {
    Shared,
    Exclusive,
}

fn open_lock_file(path: &Path) -> Result<File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(SnapshotError::io("creating", parent))?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(SnapshotError::io("opening the lock file", path))
}

/// Wait for a file lock until `deadline`; `Ok(false)` when it expired.
fn wait_lock(file: &File, path: &Path, kind: LockKind, deadline: Option<Instant>) -> Result<bool> {
    loop {
        let r = match kind {
            LockKind::Shared => file.try_lock_shared(),
            LockKind::Exclusive => file.try_lock(),
        };
        match r {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(false);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(SnapshotError::io("locking", path)(e));
            }
        }
    }
}

fn holder_of(path: &Path) -> String {
    let holder = std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string();
    if holder.is_empty() {
        "unknown".into()
    } else {
        holder
    }
}

/// `snapshots` in mia-code's data directory ([`mia_config::data_home`]):
/// where stores live when the configuration names no other place.
pub fn default_store_root() -> Option<PathBuf> {
    mia_config::data_home().map(|h| h.join("snapshots"))
}

fn short_hash(text: &[u8]) -> String {
    use sha1::Digest as _;
    let digest = sha1::Sha1::digest(text);
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn path_bytes(p: &Path) -> Vec<u8> {
    crate::capture::rel_bytes(p)
}

fn readable_name(p: &Path) -> String {
    let name = match p.file_name().map(|n| n.to_string_lossy().into_owned()) {
        Some(n) if n == ".git" => p
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Some(n) => n.trim_end_matches(".git").to_string(),
        None => String::new(),
    };
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let clean = clean.trim_matches('.').to_string();
    if clean.is_empty() {
        "project".into()
    } else {
        clean
    }
}

/// The store key of a project: from the git common directory when the
/// project is in a git repository (so every worktree of it shares one
/// object store), else from the canonical project directory. Returns the
/// key and the path it was derived from.
pub fn project_store_key(project: &Path) -> (String, PathBuf) {
    let source = Repository::discover(project)
        .ok()
        .filter(|r| {
            r.workdir()
                .and_then(|w| dunce::canonicalize(w).ok())
                .is_some_and(|w| project.starts_with(&w))
        })
        .and_then(|r| dunce::canonicalize(r.commondir()).ok())
        .unwrap_or_else(|| project.to_path_buf());
    let key = format!(
        "{}-{}",
        readable_name(&source),
        short_hash(&path_bytes(&source))
    );
    (key, source)
}

/// The key of one work tree inside its project's store.
pub fn worktree_key(project: &Path) -> String {
    format!(
        "{}-{}",
        readable_name(project),
        short_hash(&path_bytes(project))
    )
}

/// Where a work tree's store is.
struct Location {
    root: PathBuf,
    key: String,
    wt: String,
}

/// The store of `project` (canonical): a work tree keeps the store it
/// started with, even when its git layout changes later (`git init`, `.git`
/// removed), through `<root>/paths/<work tree key>`.
fn locate(project: &Path, config: &SnapshotConfig) -> Result<Location> {
    let root = match config.store_root.clone() {
        Some(r) => r,
        None => default_store_root().ok_or(SnapshotError::NoStoreRoot)?,
    };
    let wt = worktree_key(project);
    let by_path = root.join("paths").join(&wt);
    let key = match std::fs::read_to_string(&by_path) {
        Ok(k) if !k.trim().is_empty() && root.join(k.trim()).join("repo").is_dir() => {
            k.trim().to_string()
        }
        _ => {
            let (key, _) = project_store_key(project);
            if let Some(parent) = by_path.parent() {
                std::fs::create_dir_all(parent).map_err(SnapshotError::io("creating", parent))?;
            }
            atomic_write(&by_path, key.as_bytes())?;
            key
        }
    };
    Ok(Location { root, key, wt })
}

/// The step lock of `project`'s work tree for a step with unknown paths
/// (see [`SnapshotRepo::begin_step`]), taken without opening the store, so
/// a caller that shares one repository handle between sessions can wait
/// for it without holding that handle. Waits `config.step_wait` at most.
pub fn acquire_step_lock(
    project: &Path,
    config: &SnapshotConfig,
    holder: &str,
) -> Result<std::sync::Arc<StepLock>> {
    let project = validate_project_root(project)?;
    let Location { root, key, wt } = locate(&project, config)?;
    let path = root.join(key).join("worktrees").join(wt).join(SCAN_LOCK);
    let lock = take_step_lock(
        path,
        &project,
        holder,
        Some(Instant::now() + config.step_wait),
    )?;
    Ok(std::sync::Arc::new(lock))
}

fn take_step_lock(
    path: PathBuf,
    project: &Path,
    holder: &str,
    deadline: Option<Instant>,
) -> Result<StepLock> {
    let file = open_lock_file(&path)?;
    let waited = Instant::now();
    if !wait_lock(&file, &path, LockKind::Exclusive, deadline)? {
        return Err(SnapshotError::StepBusy {
            project: project.to_path_buf(),
            holder: holder_of(&path),
            waited_ms: u64::try_from(waited.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
    }
    let mut lock = StepLock { file, path };
    let _ = lock.file.set_len(0);
    let _ = write!(lock.file, "{holder}");
    Ok(lock)
}

impl SnapshotRepo {
    /// Open (creating if needed) the snapshot store of `project` under the
    /// configured store root (`config.store_root`, else
    /// [`default_store_root`]). An old in-project store
    /// (`<project>/.mia-code/snapshots`) is migrated on first open.
    pub fn open(project: impl AsRef<Path>, config: SnapshotConfig) -> Result<Self> {
        let project = validate_project_root(project.as_ref())?;
        let Location { root, key, wt } = locate(&project, &config)?;
        let source = project_store_key(&project).1;
        let store = root.join(&key);
        let dir = store.join("repo");
        let state = store.join("worktrees").join(&wt);
        std::fs::create_dir_all(&state).map_err(SnapshotError::io("creating", &state))?;
        restrict_dir(&root);
        if !store.join("source").exists() {
            let _ = write_if_changed(&store.join("source"), &path_bytes(&source));
        }
        let _ = write_if_changed(&state.join("path"), &path_bytes(&project));
        let repo = match Repository::open_bare(&dir) {
            Ok(r) => r,
            Err(_) => init_bare(&dir)?,
        };
        let mut out = Self {
            project,
            dir,
            store,
            state,
            wt,
            repo,
            config,
            cache: None,
        };
        out.migrate_legacy()?;
        ensure_project_mia_dir(&out.project);
        Ok(out)
    }

    /// The store directory of this project (`<store root>/<key>`).
    pub fn store_dir(&self) -> &Path {
        &self.store
    }

    /// This work tree's state directory inside the store.
    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// Where a forced revert keeps the content it overwrote.
    pub fn backups_dir(&self) -> PathBuf {
        self.state.join("backups")
    }

    /// Move an old in-project store's objects and refs into this store
    /// (once: a `MIGRATED` note is left in the old directory, which is kept
    /// as it was). Hashes are the same, so every indexed snapshot keeps
    /// resolving.
    fn migrate_legacy(&mut self) -> Result<()> {
        let old = self.project.join(LEGACY_SNAPSHOT_DIR);
        let note = old.join("MIGRATED");
        if !old.join("objects").is_dir() || note.exists() {
            return Ok(());
        }
        let _lock = self.lock_store_exclusive(None)?;
        if note.exists() {
            return Ok(());
        }
        let objects = self.dir.join("objects");
        copy_tree_missing(&old.join("objects"), &objects)?;
        // Borrowed objects (seeded first snapshots) stay borrowed.
        let old_alt = old.join("objects/info/alternates");
        if let Ok(text) = std::fs::read_to_string(&old_alt) {
            let alt = objects.join("info/alternates");
            let mut existing = std::fs::read_to_string(&alt).unwrap_or_default();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                if !existing.lines().any(|l| l == line) {
                    existing.push_str(line);
                    existing.push('\n');
                }
            }
            std::fs::write(&alt, existing).map_err(SnapshotError::io("writing", &alt))?;
        }
        let old_repo = Repository::open_bare(&old).map_err(|source| SnapshotError::Git {
            repo: old.clone(),
            source,
        })?;
        self.repo = Repository::open_bare(&self.dir).map_err(self.git_err())?;
        let mut moved = 0u64;
        if let Ok(refs) = old_repo.references() {
            for r in refs.flatten() {
                let (Some(name), Some(target)) = (r.name(), r.target()) else {
                    continue;
                };
                if let Some(hash) = name.strip_prefix(REF_LEGACY) {
                    if self.repo.find_tree(target).is_ok() {
                        self.set_ref(&format!("{REF_LEGACY}{hash}"), target)?;
                        moved += 1;
                    }
                } else if name == "refs/mia/latest" && self.latest().is_none() {
                    let count = std::fs::read_to_string(old.join("mia-latest"))
                        .ok()
                        .and_then(|t| t.split_whitespace().nth(1)?.parse().ok())
                        .unwrap_or(0);
                    if self.repo.find_tree(target).is_ok() {
                        self.set_latest(target, count)?;
                    }
                }
            }
        }
        std::fs::write(
            &note,
            format!(
                "The snapshots here were moved to {} ({moved} snapshots). This directory is no longer used and can be deleted.\n",
                self.store.display()
            ),
        )
        .map_err(SnapshotError::io("writing", &note))?;
        tracing::info!(from = %old.display(), to = %self.store.display(), moved, "migrated an in-project snapshot store");
        Ok(())
    }

    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The hidden repo's git directory.
    pub fn git_dir(&self) -> &Path {
        &self.dir
    }

    pub fn config(&self) -> &SnapshotConfig {
        &self.config
    }

    pub(crate) fn git_err(&self) -> impl Fn(git2::Error) -> SnapshotError + '_ {
        move |source| SnapshotError::Git {
            repo: self.dir.clone(),
            source,
        }
    }

    /// Take this work tree's lock (and the store's lock, shared), waiting
    /// until `deadline` at most.
    pub fn lock_until(&self, deadline: Option<Instant>) -> Result<RepoLock> {
        let store_path = self.store.join(STORE_LOCK);
        let store = open_lock_file(&store_path)?;
        if !wait_lock(&store, &store_path, LockKind::Shared, deadline)? {
            return Err(SnapshotError::Locked {
                repo: self.store.clone(),
                holder: "gc".into(),
            });
        }
        let path = self.state.join(LOCK_FILE);
        let file = open_lock_file(&path)?;
        if !wait_lock(&file, &path, LockKind::Exclusive, deadline)? {
            return Err(SnapshotError::Locked {
                repo: self.state.clone(),
                holder: holder_of(&path),
            });
        }
        let mut lock = RepoLock {
            _store: store,
            file,
        };
        let _ = lock.file.set_len(0);
        let _ = write!(lock.file, "{}", std::process::id());
        Ok(lock)
    }

    /// The store's exclusive lock: waits for every capture of every work
    /// tree to finish. Git's own `*.lock` files left behind by a crash are
    /// removed once it is held (nobody else can be writing then).
    pub(crate) fn lock_store_exclusive(&self, deadline: Option<Instant>) -> Result<StoreLock> {
        let path = self.store.join(STORE_LOCK);
        let file = open_lock_file(&path)?;
        if !wait_lock(&file, &path, LockKind::Exclusive, deadline)? {
            return Err(SnapshotError::Locked {
                repo: self.store.clone(),
                holder: "a capture in progress".into(),
            });
        }
        remove_stale_git_locks(&self.dir);
        Ok(StoreLock { file })
    }

    /// The lock a step with unknown paths holds from its "before" to its
    /// "after" snapshot. Waits until `deadline`; then fails with
    /// [`SnapshotError::StepBusy`] naming the holder.
    pub(crate) fn lock_scan_step(
        &self,
        holder: &str,
        deadline: Option<Instant>,
    ) -> Result<StepLock> {
        take_step_lock(self.state.join(SCAN_LOCK), &self.project, holder, deadline)
    }

    pub(crate) fn scan_lock_path(&self) -> PathBuf {
        self.state.join(SCAN_LOCK)
    }

    /// Is a step with unknown paths running on this work tree right now?
    pub(crate) fn scan_step_running(&self) -> bool {
        let path = self.state.join(SCAN_LOCK);
        let Ok(file) = open_lock_file(&path) else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(_) => true,
        }
    }

    pub(crate) fn cache_path(&self) -> PathBuf {
        self.state.join(CACHE_FILE)
    }

    pub(crate) fn wt_ref(&self, what: &str) -> String {
        format!("{REF_WORKTREES}{}/{what}", self.wt)
    }

    /// The most recent snapshot of this work tree (any session) and its
    /// file count: the base that known-path captures build on.
    pub fn latest(&self) -> Option<(Oid, u64)> {
        let text = std::fs::read_to_string(self.state.join(LATEST_FILE)).ok()?;
        let mut it = text.split_whitespace();
        let oid = Oid::from_str(it.next()?).ok()?;
        let count = it.next()?.parse().ok()?;
        self.repo.find_tree(oid).ok()?;
        Some((oid, count))
    }

    pub(crate) fn set_latest(&self, oid: Oid, count: u64) -> Result<()> {
        let path = self.state.join(LATEST_FILE);
        atomic_write(&path, format!("{oid} {count}\n").as_bytes())?;
        self.set_ref(&self.wt_ref("latest"), oid)
    }

    /// Point a ref at an object by writing the loose ref file ourselves
    /// (a unique temp file + rename). libgit2's reference API checks every
    /// existing ref for name conflicts on each write, which made each
    /// capture cost O(number of snapshots).
    pub(crate) fn set_ref(&self, name: &str, oid: Oid) -> Result<()> {
        let path = self.dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(SnapshotError::io("creating", parent))?;
        }
        atomic_write(&path, format!("{oid}\n").as_bytes())
    }

    /// The ref that keeps a snapshot of `session` (None: a capture without
    /// a session) reachable.
    pub(crate) fn owner_ref(session: Option<&str>, oid: Oid) -> String {
        match session.filter(|s| !s.is_empty()) {
            Some(s) => format!("{REF_SESSIONS}{}/{oid}", sanitize_ref_part(s)),
            None => format!("{REF_CLI}{oid}"),
        }
    }

    /// Keep a snapshot reachable for its owner (git gc never drops what a
    /// ref names). Always rewritten: a retention pass that just decided to
    /// drop the same tree for the same owner cannot race it away, because
    /// retention runs while the owner holds its session.
    pub(crate) fn keep_for(&self, session: Option<&str>, oid: Oid) -> Result<()> {
        self.set_ref(&Self::owner_ref(session, oid), oid)
    }

    /// Resolve a (possibly abbreviated) snapshot hash.
    pub fn resolve(&self, hash: &str) -> Result<Oid> {
        let not_found = || SnapshotError::SnapshotNotFound {
            hash: hash.to_string(),
            repo: self.dir.clone(),
        };
        let obj = self.repo.revparse_single(hash).map_err(|_| not_found())?;
        let tree = obj.peel_to_tree().map_err(|_| not_found())?;
        Ok(tree.id())
    }

    /// Run git on the hidden repo with the user's configuration, hooks,
    /// pagers and fsmonitor kept out.
    pub(crate) fn git(&self, args: &[&str]) -> Result<std::process::Output> {
        let mut cmd = Command::new("git");
        cmd.arg("--no-pager")
            .arg("--git-dir")
            .arg(&self.dir)
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "gc.auto=0",
                "-c",
                "core.untrackedCache=false",
            ])
            .args(args);
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_CONFIG",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
            "GIT_EXTERNAL_DIFF",
            "GIT_PAGER",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", null_device())
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::null());
        let out = cmd
            .output()
            .map_err(SnapshotError::io("running git for", &self.dir))?;
        if !out.status.success() {
            return Err(SnapshotError::GitCommand {
                args: args.join(" "),
                repo: self.dir.clone(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(out)
    }

    /// Turn a path a tool gave (absolute or project-relative) into a
    /// `/`-separated project-relative path.
    pub fn relative_path(&self, path: &Path) -> Result<String> {
        let outside = || SnapshotError::PathOutsideProject {
            path: path.to_path_buf(),
            project: self.project.clone(),
        };
        let rel: PathBuf = if path.is_absolute() {
            if let Ok(r) = path.strip_prefix(&self.project) {
                r.to_path_buf()
            } else {
                // The project may have been given through a symlink
                // (/tmp → /private/tmp): canonicalise the deepest existing
                // ancestor.
                let mut existing = path.to_path_buf();
                let mut tail = Vec::new();
                while !existing.exists() {
                    match (existing.file_name(), existing.parent()) {
                        (Some(n), Some(p)) => {
                            tail.push(n.to_os_string());
                            existing = p.to_path_buf();
                        }
                        _ => return Err(outside()),
                    }
                }
                let canon = dunce::canonicalize(existing).map_err(|_| outside())?;
                let mut r = canon
                    .strip_prefix(&self.project)
                    .map_err(|_| outside())?
                    .to_path_buf();
                for n in tail.iter().rev() {
                    r.push(n);
                }
                r
            }
        } else {
            path.to_path_buf()
        };
        let mut parts: Vec<String> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) => parts.push(crate::names::os_enc(n)),
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(outside());
                    }
                }
                _ => return Err(outside()),
            }
        }
        Ok(parts.join("/"))
    }
}

fn null_device() -> &'static str {
    if cfg!(windows) { "NUL" } else { "/dev/null" }
}

/// Refuse `/`, a drive root and the home directory as project roots.
pub fn validate_project_root(path: &Path) -> Result<PathBuf> {
    let canon = dunce::canonicalize(path).map_err(|source| SnapshotError::ProjectNotFound {
        path: path.to_path_buf(),
        source,
    })?;
    if !canon.is_dir() {
        return Err(SnapshotError::ProjectNotFound {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
        });
    }
    if canon.parent().is_none() {
        return Err(SnapshotError::UnsafeProjectRoot {
            path: canon,
            what: "the filesystem root",
        });
    }
    for var in ["HOME", "USERPROFILE"] {
        if let Some(home) = std::env::var_os(var) {
            let home = PathBuf::from(home);
            let home = dunce::canonicalize(&home).unwrap_or(home);
            if home == canon {
                return Err(SnapshotError::UnsafeProjectRoot {
                    path: canon,
                    what: "your home directory",
                });
            }
        }
    }
    Ok(canon)
}

fn init_bare(dir: &Path) -> Result<Repository> {
    let git = |source| SnapshotError::Git {
        repo: dir.to_path_buf(),
        source,
    };
    let mut opts = RepositoryInitOptions::new();
    opts.bare(true).no_reinit(false).mkpath(true);
    let r = Repository::init_opts(dir, &opts).map_err(git)?;
    {
        let mut cfg = r.config().map_err(git)?;
        for (k, v) in [
            ("gc.auto", "0"),
            ("core.logAllRefUpdates", "false"),
            ("core.fsmonitor", "false"),
            ("core.autocrlf", "false"),
            ("core.hooksPath", "/dev/null"),
            ("gc.pruneExpire", "now"),
        ] {
            cfg.set_str(k, v).map_err(git)?;
        }
    }
    Ok(r)
}

/// A ref name component from a session id (ids are UUIDs; anything else
/// is made safe).
fn sanitize_ref_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Replace a file atomically: a unique temp file in the same directory,
/// flushed, then renamed over the target (`tempfile`'s persist).
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(SnapshotError::io("writing", dir))?;
    tmp.write_all(bytes)
        .map_err(SnapshotError::io("writing", tmp.path().to_path_buf()))?;
    tmp.persist(path)
        .map(|_| ())
        .map_err(|e| SnapshotError::io("replacing", path)(e.error))
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).ok().as_deref() == Some(bytes) {
        return Ok(());
    }
    atomic_write(path, bytes)
}

/// The store holds copies of project files: only the user may read it.
fn restrict_dir(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(dir)
            && m.permissions().mode() & 0o077 != 0
        {
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Copy every file under `from` to the same place under `to` unless it is
/// there already (git objects are immutable: same name, same content).
fn copy_tree_missing(from: &Path, to: &Path) -> Result<()> {
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        std::fs::create_dir_all(&dst).map_err(SnapshotError::io("creating", &dst))?;
        let rd = std::fs::read_dir(&src).map_err(SnapshotError::io("reading", &src))?;
        for e in rd {
            let e = e.map_err(SnapshotError::io("reading", &src))?;
            let ft = e
                .file_type()
                .map_err(SnapshotError::io("reading", e.path()))?;
            let target = dst.join(e.file_name());
            if ft.is_dir() {
                stack.push((e.path(), target));
            } else if ft.is_file() && !target.exists() && e.file_name() != "alternates" {
                let tmp = dst.join(format!(
                    ".{}.migrating-{}",
                    e.file_name().to_string_lossy(),
                    std::process::id()
                ));
                std::fs::copy(e.path(), &tmp).map_err(SnapshotError::io("copying", e.path()))?;
                std::fs::rename(&tmp, &target)
                    .map_err(SnapshotError::io("copying", target.clone()))?;
            }
        }
    }
    Ok(())
}

/// The project's own `.mia-code/` (watcher sync markers; later worktrees,
/// skills, agents) is kept out of git: a `.gitignore` of `*` inside it and
/// `/.mia-code/` in `.git/info/exclude` (never a tracked file). Best effort.
fn ensure_project_mia_dir(project: &Path) {
    let mia = project.join(MIA_DIR);
    let ignore_file = mia.join(".gitignore");
    if !ignore_file.exists() && std::fs::create_dir_all(&mia).is_ok() {
        let _ = std::fs::write(&ignore_file, "*\n");
    }
    let Ok(repo) = Repository::open(project) else {
        return;
    };
    if repo
        .workdir()
        .and_then(|w| dunce::canonicalize(w).ok())
        .as_deref()
        != Some(project)
    {
        return;
    }
    let info = repo.commondir().join("info");
    let path = info.join("exclude");
    let existing = std::fs::read_to_string(&path).unwrap_or_default();
    if existing
        .lines()
        .any(|l| l.trim() == "/.mia-code/" || l.trim() == ".mia-code/")
    {
        return;
    }
    let _ = std::fs::create_dir_all(&info);
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("/.mia-code/\n");
    let _ = std::fs::write(&path, text);
}

/// Remove `*.lock` files git or libgit2 left in the store's repository when
/// a process died mid-write. Only called while holding the store's
/// exclusive lock.
fn remove_stale_git_locks(dir: &Path) {
    remove_locks_in(dir, false);
    remove_locks_in(&dir.join("refs"), true);
}

fn remove_locks_in(d: &Path, recurse: bool) {
    let Ok(rd) = std::fs::read_dir(d) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if recurse {
                remove_locks_in(&p, true);
            }
        } else if p.extension().is_some_and(|x| x == "lock") {
            tracing::warn!(path = %p.display(), "removing stale git lock file");
            let _ = std::fs::remove_file(&p);
        }
    }
}
