//! The full-scan walker: a small parallel directory walk (2 threads) that
//! applies `.gitignore` files top-down the way git does, skips `.git`, our own
//! directory, the built-in heavy directories and nested repositories, `lstat`s
//! every file and checks it against the stat cache on the spot. Its output is
//! grouped by directory, which is exactly what tree building needs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::cache::{Content, FastMap, StatCache, StatInfo};
use crate::model::{ExcludeReason, ExcludedFile};
use crate::repo::MIA_DIR;

#[derive(Debug)]
pub(crate) struct FileItem {
    /// Project-relative path.
    pub rel: Vec<u8>,
    pub stat: StatInfo,
    /// What the stat cache vouches for (None: must be read).
    pub hit: Option<Content>,
}

#[derive(Debug, Default)]
pub(crate) struct DirScan {
    pub files: Vec<FileItem>,
    /// Names of subdirectories that were walked.
    pub subdirs: Vec<Vec<u8>>,
    /// Something in this directory (not below) changed since the cached scan.
    pub dirty: bool,
}

#[derive(Debug, Default)]
pub(crate) struct ScanOutput {
    /// Directory (project-relative, "" for the root) → its content.
    pub dirs: FastMap<Vec<u8>, DirScan>,
    pub excluded: Vec<ExcludedFile>,
    pub timed_out: bool,
}

/// Gitignore matchers in force for a directory, outermost first; each with
/// the project-relative directory its patterns are relative to.
#[derive(Debug, Default, Clone)]
struct Ignores(Vec<(Arc<Gitignore>, Vec<u8>)>);

impl Ignores {
    fn ignored(&self, rel: &[u8], is_dir: bool) -> bool {
        for (gi, base) in self.0.iter().rev() {
            let sub = if base.is_empty() {
                rel
            } else if rel.len() > base.len() {
                &rel[base.len() + 1..]
            } else {
                continue;
            };
            let m = gi.matched(bytes_path(sub), is_dir);
            if m.is_ignore() {
                return true;
            }
            if m.is_whitelist() {
                return false;
            }
        }
        false
    }
}

#[cfg(unix)]
fn bytes_path(b: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn bytes_path(b: &[u8]) -> &Path {
    Path::new(std::str::from_utf8(b).unwrap_or(""))
}

#[cfg(unix)]
fn name_bytes(n: &OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    n.as_bytes().to_vec()
}

#[cfg(not(unix))]
fn name_bytes(n: &OsStr) -> Vec<u8> {
    n.to_string_lossy().into_owned().into_bytes()
}

struct Job {
    abs: PathBuf,
    rel: Vec<u8>,
    ignores: Ignores,
}

struct Queue {
    jobs: Vec<Job>,
    active: usize,
}

/// Root-level matchers: the global excludes file and `.git/info/exclude`.
fn root_ignores(root: &Path) -> Ignores {
    let mut v = Vec::new();
    let (global, _) = GitignoreBuilder::new(root).build_global();
    if !global.is_empty() {
        v.push((Arc::new(global), Vec::new()));
    }
    let info = root.join(".git/info/exclude");
    if info.is_file() {
        let mut b = GitignoreBuilder::new(root);
        let _ = b.add(&info);
        if let Ok(gi) = b.build()
            && !gi.is_empty()
        {
            v.push((Arc::new(gi), Vec::new()));
        }
    }
    Ignores(v)
}

/// Walk the project from `root` (a subdirectory start is not supported
/// here; named directories use the `ignore`-based walk).
pub(crate) fn scan(
    root: &Path,
    excluded_dirs: &[String],
    cache: &StatCache,
    deadline: Option<Instant>,
) -> ScanOutput {
    let queue = Mutex::new(Queue {
        jobs: vec![Job {
            abs: root.to_path_buf(),
            rel: Vec::new(),
            ignores: root_ignores(root),
        }],
        active: 0,
    });
    let cv = Condvar::new();
    let stop = AtomicBool::new(false);
    let results: Mutex<ScanOutput> = Mutex::new(ScanOutput::default());
    std::thread::scope(|s| {
        for _ in 0..scan_threads() {
            s.spawn(|| {
                let mut local = ScanOutput::default();
                loop {
                    let job = {
                        let Ok(mut q) = queue.lock() else { break };
                        loop {
                            if stop.load(Ordering::Relaxed) {
                                break None;
                            }
                            if let Some(j) = q.jobs.pop() {
                                q.active += 1;
                                break Some(j);
                            }
                            if q.active == 0 {
                                break None;
                            }
                            match cv.wait(q) {
                                Ok(g) => q = g,
                                Err(_) => return,
                            }
                        }
                    };
                    let Some(job) = job else {
                        cv.notify_all();
                        break;
                    };
                    if deadline.is_some_and(|d| Instant::now() > d) {
                        stop.store(true, Ordering::Relaxed);
                        local.timed_out = true;
                    }
                    let new_jobs = if local.timed_out {
                        Vec::new()
                    } else {
                        process(job, excluded_dirs, cache, &mut local)
                    };
                    if let Ok(mut q) = queue.lock() {
                        q.jobs.extend(new_jobs);
                        q.active -= 1;
                    }
                    cv.notify_all();
                }
                if let Ok(mut r) = results.lock() {
                    r.dirs.extend(local.dirs);
                    r.excluded.append(&mut local.excluded);
                    r.timed_out |= local.timed_out;
                }
            });
        }
    });
    let mut out = results.into_inner().unwrap_or_default();
    out.timed_out |= stop.load(Ordering::Relaxed);
    out
}

fn process(
    job: Job,
    excluded_dirs: &[String],
    cache: &StatCache,
    out: &mut ScanOutput,
) -> Vec<Job> {
    let mut scan = DirScan::default();
    let mut jobs = Vec::new();
    let Ok(rd) = std::fs::read_dir(&job.abs) else {
        if !job.rel.is_empty() {
            out.excluded.push(ExcludedFile {
                path: format!("{}/", crate::names::enc(&job.rel)),
                reason: ExcludeReason::Unreadable,
            });
        }
        out.dirs.insert(job.rel, scan);
        return jobs;
    };
    let entries: Vec<(std::ffi::OsString, Option<std::fs::FileType>)> = rd
        .flatten()
        .map(|e| (e.file_name(), e.file_type().ok()))
        .collect();
    // A nested git repository (its own history keeps it safe): seen from
    // its own listing, so no extra stat per directory.
    if !job.rel.is_empty() && entries.iter().any(|(n, _)| n == ".git") {
        out.excluded.push(ExcludedFile {
            path: format!("{}/", crate::names::enc(&job.rel)),
            reason: ExcludeReason::NestedRepo,
        });
        out.dirs.insert(job.rel, scan);
        return jobs;
    }
    let mut ignores = job.ignores;
    if entries
        .iter()
        .any(|(n, ft)| n == ".gitignore" && ft.is_some_and(|t| !t.is_dir()))
    {
        let mut b = GitignoreBuilder::new(&job.abs);
        let _ = b.add(job.abs.join(".gitignore"));
        if let Ok(gi) = b.build()
            && !gi.is_empty()
        {
            ignores.0.push((Arc::new(gi), job.rel.clone()));
        }
    }
    let is_root = job.rel.is_empty();
    let mut buf = job.abs.clone();
    for (name, ft) in entries {
        if name == ".git" || (is_root && name == MIA_DIR) {
            continue;
        }
        let Some(ft) = ft else { continue };
        let nb = name_bytes(&name);
        let mut rel = Vec::with_capacity(job.rel.len() + 1 + nb.len());
        if !is_root {
            rel.extend_from_slice(&job.rel);
            rel.push(b'/');
        }
        rel.extend_from_slice(&nb);
        let is_dir = ft.is_dir();
        if !ignores.0.is_empty() && ignores.ignored(&rel, is_dir) {
            continue;
        }
        if is_dir {
            let abs = job.abs.join(&name);
            if excluded_dirs.iter().any(|d| name == d.as_str()) {
                out.excluded.push(ExcludedFile {
                    path: format!("{}/", crate::names::enc(&rel)),
                    reason: ExcludeReason::ExcludedDir,
                });
                continue;
            }
            scan.subdirs.push(nb);
            jobs.push(Job {
                abs,
                rel,
                ignores: ignores.clone(),
            });
        } else if ft.is_file() || ft.is_symlink() {
            buf.push(&name);
            let meta = std::fs::symlink_metadata(&buf);
            buf.pop();
            let Ok(meta) = meta else {
                continue;
            };
            if is_sandbox_placeholder(&meta) {
                continue;
            }
            let stat = StatInfo::from_metadata(&meta);
            let hit = cache.lookup(&rel, &stat);
            scan.files.push(FileItem { rel, stat, hit });
        } else {
            out.excluded.push(ExcludedFile {
                path: crate::names::enc(&rel),
                reason: ExcludeReason::SpecialFile,
            });
        }
    }
    out.dirs.insert(job.rel, scan);
    jobs
}

/// Threads for the scan: `lstat` is mostly kernel time, so a few more
/// threads than cores keep both cores busy. `MIA_SNAPSHOT_SCAN_THREADS`
/// overrides.
fn scan_threads() -> usize {
    std::env::var("MIA_SNAPSHOT_SCAN_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() * 2)
                .unwrap_or(4)
                .clamp(2, 16)
        })
}

/// Would a full scan skip `rel` (gitignored, inside `.git`/`.mia-code`, an
/// excluded or ignored directory)? Reads the `.gitignore` files on the way
/// down, so it is meant for a handful of paths (watcher reports), not a tree.
pub(crate) fn scan_skips(root: &Path, rel: &str, excluded_dirs: &[String]) -> bool {
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return false;
    }
    if parts.contains(&".git") || parts[0] == MIA_DIR {
        return true;
    }
    let mut ignores = root_ignores(root);
    let mut dir = root.to_path_buf();
    let mut dir_rel: Vec<u8> = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let gi_path = dir.join(".gitignore");
        if gi_path.is_file() {
            let mut b = GitignoreBuilder::new(&dir);
            let _ = b.add(&gi_path);
            if let Ok(gi) = b.build()
                && !gi.is_empty()
            {
                ignores.0.push((Arc::new(gi), dir_rel.clone()));
            }
        }
        let mut rel_here = dir_rel.clone();
        if !rel_here.is_empty() {
            rel_here.push(b'/');
        }
        rel_here.extend_from_slice(part.as_bytes());
        let is_last = i + 1 == parts.len();
        let is_dir = !is_last || dir.join(part).is_dir();
        if is_dir && excluded_dirs.iter().any(|d| d == part) {
            return true;
        }
        if ignores.ignored(&rel_here, is_dir) {
            return true;
        }
        dir.push(part);
        dir_rel = rel_here;
    }
    false
}

/// A mount point the OS sandbox made for a protected path that did not
/// exist (an empty file with the sticky bit, which no person makes; see
/// mia-sandbox's `placeholder.rs`). It comes and goes with the sandboxed
/// processes (an MCP server's lives as long as the server), so it is never
/// part of a snapshot: a step would otherwise "create" it, and undoing the
/// step would find it gone.
pub(crate) fn is_sandbox_placeholder(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        m.is_file() && m.len() == 0 && m.permissions().mode() & 0o1000 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}
