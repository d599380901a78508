//! A [`ChangeFeed`] from a file watcher per attempt directory, for a
//! long-lived process (the desktop app, `mia-code serve`): after the first
//! comparison of an attempt, the next ones re-read only what its watcher
//! saw change.
//!
//! The watcher is mia-snapshot's (one inotify/FSEvents/ReadDirectoryChanges
//! watch per directory, ignored directories left out, overflow and failed
//! registrations reported as "unknown"). Its sync markers go to the
//! attempt's state directory in the git directory, never into the working
//! tree. At most [`MAX_WATCHED`] attempts are watched at once; the least
//! recently compared one is dropped first (its next comparison scans).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use mia_snapshot::{OutsideChanges, ProjectWatcher, WatchOptions};

use crate::feed::{AttemptDir, ChangeFeed, KnownChanges};

/// Attempts watched at once (each costs a watch per directory).
pub const MAX_WATCHED: usize = 8;

/// Watches the attempts it is asked about.
#[derive(Default)]
pub struct WatchedAttempts {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    inner: Mutex<Inner>,
    /// Signalled when a watcher finished starting.
    started: Condvar,
}

impl std::fmt::Debug for WatchedAttempts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.shared.inner.lock().map_or(0, |i| i.watches.len());
        f.debug_struct("WatchedAttempts")
            .field("watched", &n)
            .finish()
    }
}

#[derive(Default)]
struct Inner {
    watches: HashMap<PathBuf, Watch>,
    /// Directories whose watcher is being started.
    starting: HashSet<PathBuf>,
    tick: u64,
}

struct Watch {
    watcher: Arc<ProjectWatcher>,
    /// The directory the watch was set on: a directory removed and made
    /// again under the same name (a worktree re-created) is another one.
    identity: Option<DirId>,
    last_used: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DirId {
    dev: u64,
    ino: u64,
}

fn dir_id(dir: &Path) -> Option<DirId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(dir).ok()?;
        Some(DirId {
            dev: m.dev(),
            ino: m.ino(),
        })
    }
    #[cfg(not(unix))]
    {
        // No inode number in std on Windows: a watcher whose directory
        // went away reports it (degraded), which is what is relied on.
        let _ = dir;
        None
    }
}

impl WatchedAttempts {
    pub fn new() -> Self {
        Self::default()
    }

    fn start(&self, dir: PathBuf, identity: Option<DirId>, markers: PathBuf) {
        {
            let Ok(mut inner) = self.shared.inner.lock() else {
                return;
            };
            if !inner.starting.insert(dir.clone()) {
                return;
            }
        }
        let shared = Arc::clone(&self.shared);
        let key = dir.clone();
        let spawned = std::thread::Builder::new()
            .name("mia-git-watch-start".into())
            .spawn(move || {
                let options = WatchOptions {
                    excluded_dirs: Vec::new(),
                    marker_dir: Some(markers),
                };
                let started = ProjectWatcher::start_with(&dir, options);
                let Ok(mut inner) = shared.inner.lock() else {
                    return;
                };
                inner.starting.remove(&dir);
                match started {
                    Ok(watcher) => {
                        if inner.watches.len() >= MAX_WATCHED
                            && let Some(oldest) = inner
                                .watches
                                .iter()
                                .min_by_key(|(_, w)| w.last_used)
                                .map(|(p, _)| p.clone())
                        {
                            inner.watches.remove(&oldest);
                        }
                        let last_used = inner.tick;
                        inner.watches.insert(
                            dir,
                            Watch {
                                watcher: Arc::new(watcher),
                                identity,
                                last_used,
                            },
                        );
                    }
                    Err(e) => {
                        tracing::info!(dir = %dir.display(), error = %e, "cannot watch an attempt; its comparisons scan it");
                    }
                }
                shared.started.notify_all();
            });
        if spawned.is_err()
            && let Ok(mut inner) = self.shared.inner.lock()
        {
            inner.starting.remove(&key);
        }
    }

    /// Wait until no watcher is still starting (at most `timeout`); false
    /// on timeout. For tests and benchmarks that need a known state.
    pub fn wait_started(&self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let Ok(mut inner) = self.shared.inner.lock() else {
            return false;
        };
        while !inner.starting.is_empty() {
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            match self.shared.started.wait_timeout(inner, deadline - now) {
                Ok((g, _)) => inner = g,
                Err(_) => return false,
            }
        }
        true
    }

    /// How many attempts are watched now.
    pub fn watched(&self) -> usize {
        self.shared.inner.lock().map_or(0, |i| i.watches.len())
    }
}

impl ChangeFeed for WatchedAttempts {
    fn take(&self, attempt: &AttemptDir<'_>) -> KnownChanges {
        let Ok(dir) = dunce::canonicalize(attempt.dir) else {
            return KnownChanges::Unknown;
        };
        let identity = dir_id(&dir);
        let known = {
            let Ok(mut inner) = self.shared.inner.lock() else {
                return KnownChanges::Unknown;
            };
            inner.tick += 1;
            let tick = inner.tick;
            match inner.watches.get_mut(&dir) {
                Some(w) if w.identity == identity => {
                    w.last_used = tick;
                    Some(Arc::clone(&w.watcher))
                }
                Some(_) => {
                    inner.watches.remove(&dir);
                    None
                }
                None => None,
            }
        };
        // The lock is not held while a watcher syncs or starts: the two
        // attempts of a comparison are read at once.
        if let Some(watcher) = known {
            let first = !watcher.primed();
            return match watcher.take_changes() {
                OutsideChanges::Known(paths) => KnownChanges::Paths(paths),
                OutsideChanges::Unknown { .. } if first && watcher.degraded().is_none() => {
                    KnownChanges::Primed
                }
                OutsideChanges::Unknown { reason } => {
                    tracing::debug!(dir = %dir.display(), %reason, "attempt watcher cannot tell; scanning");
                    KnownChanges::Unknown
                }
            };
        }
        // Not watched yet: start a watcher in the background (walking a
        // large tree to set its watches must not slow this comparison),
        // and scan. Its first take says "unknown" (it cannot know what
        // happened before it started) and starts its period: the scan after
        // that take is the reference the next takes narrow from.
        self.start(dir, identity, attempt.state_dir.to_path_buf());
        KnownChanges::Unknown
    }

    fn forget(&self, dir: &Path) {
        let dir = dunce::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if let Ok(mut inner) = self.shared.inner.lock() {
            inner.watches.remove(&dir);
        }
    }
}
