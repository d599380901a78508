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

/// Where the hidden repo lives inside a project.
pub const SNAPSHOT_DIR: &str = ".mia-code/snapshots";
pub(crate) const MIA_DIR: &str = ".mia-code";
const LOCK_FILE: &str = "mia.lock";
const LATEST_FILE: &str = "mia-latest";
const CACHE_FILE: &str = "mia-statcache";
pub(crate) const REF_PREFIX: &str = "refs/mia/snapshots/";
pub(crate) const REF_LATEST: &str = "refs/mia/latest";
pub(crate) const REF_SCAN: &str = "refs/mia/scan";
pub(crate) const REF_SCAN_SAVED: &str = "refs/mia/scan-saved";

/// The snapshot engine for one project. Not `Sync`: one owner (the session
/// actor or a CLI command) drives it; other processes are kept out by a file
/// lock held for the length of each operation.
pub struct SnapshotRepo {
    pub(crate) project: PathBuf,
    pub(crate) dir: PathBuf,
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
    file: File,
}

impl Drop for RepoLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

impl SnapshotRepo {
    /// Open (creating if needed) the hidden repo of `project`.
    pub fn open(project: impl AsRef<Path>, config: SnapshotConfig) -> Result<Self> {
        let project = validate_project_root(project.as_ref())?;
        let mia = project.join(MIA_DIR);
        let dir = project.join(SNAPSHOT_DIR);
        std::fs::create_dir_all(&dir).map_err(SnapshotError::io("creating", &dir))?;
        // Keep our directory out of every git repo above it, whatever
        // happens to .git/info/exclude.
        let ignore_file = mia.join(".gitignore");
        if !ignore_file.exists() {
            std::fs::write(&ignore_file, "*\n")
                .map_err(SnapshotError::io("writing", &ignore_file))?;
        }
        let repo = match Repository::open_bare(&dir) {
            Ok(r) => r,
            Err(_) => {
                let mut opts = RepositoryInitOptions::new();
                opts.bare(true).no_reinit(false).mkpath(true);
                let r =
                    Repository::init_opts(&dir, &opts).map_err(|source| SnapshotError::Git {
                        repo: dir.clone(),
                        source,
                    })?;
                {
                    let mut cfg = r.config().map_err(|source| SnapshotError::Git {
                        repo: dir.clone(),
                        source,
                    })?;
                    for (k, v) in [
                        ("gc.auto", "0"),
                        ("core.logAllRefUpdates", "false"),
                        ("core.fsmonitor", "false"),
                        ("core.autocrlf", "false"),
                        ("core.hooksPath", "/dev/null"),
                        ("gc.pruneExpire", "now"),
                    ] {
                        cfg.set_str(k, v).map_err(|source| SnapshotError::Git {
                            repo: dir.clone(),
                            source,
                        })?;
                    }
                }
                r
            }
        };
        exclude_from_project_git(&project);
        Ok(Self {
            project,
            dir,
            repo,
            config,
            cache: None,
        })
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

    /// Take the repo lock, waiting until `deadline` at most. Git's own
    /// `*.lock` files left behind by a crash are removed once we hold it
    /// (nobody else can be writing then).
    pub fn lock_until(&self, deadline: Option<Instant>) -> Result<RepoLock> {
        let path = self.dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(SnapshotError::io("opening the lock file", &path))?;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    let expired = deadline.is_some_and(|d| Instant::now() >= d);
                    if expired {
                        let holder = std::fs::read_to_string(&path)
                            .unwrap_or_default()
                            .trim()
                            .to_string();
                        return Err(SnapshotError::Locked {
                            repo: self.dir.clone(),
                            holder: if holder.is_empty() {
                                "unknown".into()
                            } else {
                                holder
                            },
                        });
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(SnapshotError::io("locking", &path)(e));
                }
            }
        }
        let mut lock = RepoLock { file };
        let _ = lock.file.set_len(0);
        let _ = write!(lock.file, "{}", std::process::id());
        remove_stale_git_locks(&self.dir);
        Ok(lock)
    }

    pub(crate) fn cache_path(&self) -> PathBuf {
        self.dir.join(CACHE_FILE)
    }

    /// The most recent snapshot of this project (any session) and its file
    /// count: the base that known-path captures build on.
    pub fn latest(&self) -> Option<(Oid, u64)> {
        let text = std::fs::read_to_string(self.dir.join(LATEST_FILE)).ok()?;
        let mut it = text.split_whitespace();
        let oid = Oid::from_str(it.next()?).ok()?;
        let count = it.next()?.parse().ok()?;
        self.repo.find_tree(oid).ok()?;
        Some((oid, count))
    }

    pub(crate) fn set_latest(&self, oid: Oid, count: u64) -> Result<()> {
        let path = self.dir.join(LATEST_FILE);
        let tmp = self.dir.join("mia-latest.tmp");
        std::fs::write(&tmp, format!("{oid} {count}\n"))
            .map_err(SnapshotError::io("writing", &tmp))?;
        std::fs::rename(&tmp, &path).map_err(SnapshotError::io("replacing", &path))?;
        self.set_ref(REF_LATEST, oid)
    }

    /// Point a ref at an object by writing the loose ref file ourselves
    /// (`<name>.lock` + rename, as git does). libgit2's reference API checks
    /// every existing ref for name conflicts on each write, which made each
    /// capture cost O(number of snapshots).
    pub(crate) fn set_ref(&self, name: &str, oid: Oid) -> Result<()> {
        let path = self.dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(SnapshotError::io("creating", parent))?;
        }
        let tmp = self.dir.join(format!("{name}.lock"));
        std::fs::write(&tmp, format!("{oid}\n")).map_err(SnapshotError::io("writing", &tmp))?;
        std::fs::rename(&tmp, &path).map_err(SnapshotError::io("updating the ref", &path))
    }

    /// Keep a snapshot reachable (git gc never drops what a ref names).
    pub(crate) fn keep(&self, oid: Oid) -> Result<()> {
        let name = format!("{REF_PREFIX}{oid}");
        if self.dir.join(&name).exists() || self.repo.find_reference(&name).is_ok() {
            return Ok(());
        }
        self.set_ref(&name, oid)
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
                let canon = existing.canonicalize().map_err(|_| outside())?;
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
                Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
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
    let canon = path
        .canonicalize()
        .map_err(|source| SnapshotError::ProjectNotFound {
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
            let home = home.canonicalize().unwrap_or(home);
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

/// Add `/.mia-code/` to the project's `.git/info/exclude` (never to a
/// tracked file). Best effort: the `.mia-code/.gitignore` covers the rest.
fn exclude_from_project_git(project: &Path) {
    let Ok(repo) = Repository::open(project) else {
        return;
    };
    if repo
        .workdir()
        .and_then(|w| w.canonicalize().ok())
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

/// Remove `*.lock` files git or libgit2 left in the hidden repo when a
/// process died mid-write. Only called while holding the repo lock.
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
        } else if p.extension().is_some_and(|x| x == "lock")
            && p.file_name().is_some_and(|n| n != LOCK_FILE)
        {
            tracing::warn!(path = %p.display(), "removing stale git lock file");
            let _ = std::fs::remove_file(&p);
        }
    }
}
