//! Outside-change tracking with `notify`: which files changed between steps
//! without mia-code doing it. Used to warn before a revert would overwrite
//! them, to narrow full-scan captures to the changed paths while the watcher
//! is healthy (falling back to a scan after an overflow), and to tell the UI.
//!
//! Directories are watched one by one (not recursively) so `.git/`,
//! `.mia-code/`, excluded heavy directories and gitignored directories cost
//! no watches; new directories are picked up as they appear.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::error::{Result, SnapshotError};
use crate::repo::MIA_DIR;

/// Sync markers are `.mia-code/watch-sync-<n>`: the number is in the name,
/// so a late event of an older marker can never vouch for a newer one.
const SYNC_PREFIX: &str = "watch-sync-";

/// What the watcher knows about outside changes since the last take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutsideChanges {
    /// Exactly these project-relative paths changed (files or directories).
    Known(Vec<String>),
    /// The watcher overflowed, failed or is not running: scan instead.
    Unknown { reason: String },
}

#[derive(Debug, Default)]
struct State {
    changed: BTreeSet<String>,
    broken: Option<String>,
    /// A directory could not be watched (e.g. the inotify limit): the
    /// watcher can never vouch for a complete list again; captures scan.
    degraded: Option<String>,
    /// A take happened: changes before the watcher started are unknown, so
    /// the first take always says "scan".
    primed: bool,
    last_event: Option<Instant>,
    sync_seen: u64,
}

/// Watches one project. Dropping it stops the watch.
pub struct ProjectWatcher {
    root: PathBuf,
    /// Where sync markers are written (see [`WatchOptions::marker_dir`]).
    markers: PathBuf,
    state: Arc<(Mutex<State>, Condvar)>,
    _watcher: Arc<Mutex<RecommendedWatcher>>,
    sync_counter: Mutex<u64>,
}

impl std::fmt::Debug for ProjectWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectWatcher")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// How [`ProjectWatcher::start_with`] watches a directory.
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// Directory names never watched (`node_modules`, …).
    pub excluded_dirs: Vec<String>,
    /// Where the sync markers go. `None`: the project's own `.mia-code/`,
    /// which is then not watched otherwise. A directory outside the
    /// project (a git worktree's admin directory) keeps the watched tree
    /// untouched; the project's `.mia-code/` is then watched like any
    /// other directory.
    pub marker_dir: Option<PathBuf>,
}

/// What a watcher leaves out.
#[derive(Debug, Clone)]
struct Skip {
    excluded: Vec<String>,
    /// The project's `.mia-code/` holds the markers (and is not watched).
    mia_dir: bool,
}

impl Skip {
    fn skips(&self, rel: &str) -> bool {
        let first = rel.split('/').next().unwrap_or("");
        if self.mia_dir && first == MIA_DIR {
            return true;
        }
        rel.split('/')
            .any(|c| c == ".git" || self.excluded.iter().any(|e| e == c))
    }
}

#[cfg(test)]
fn is_skipped(rel: &str, excluded: &[String]) -> bool {
    Skip {
        excluded: excluded.to_vec(),
        mia_dir: true,
    }
    .skips(rel)
}

impl ProjectWatcher {
    /// Start watching `project` (already validated by
    /// [`crate::SnapshotRepo::open`]), skipping `excluded_dirs`.
    pub fn start(project: &Path, excluded_dirs: Vec<String>) -> Result<Self> {
        Self::start_with(
            project,
            WatchOptions {
                excluded_dirs,
                marker_dir: None,
            },
        )
    }

    /// Start watching `project` as `options` say.
    pub fn start_with(project: &Path, options: WatchOptions) -> Result<Self> {
        let root = dunce::canonicalize(project).map_err(SnapshotError::io("watching", project))?;
        let skip = Skip {
            excluded: options.excluded_dirs,
            mia_dir: options.marker_dir.is_none(),
        };
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
        let watcher = notify::recommended_watcher(move |ev| {
            let _ = tx.send(ev);
        })
        .map_err(|e| {
            SnapshotError::io("starting the file watcher on", &root)(std::io::Error::other(e))
        })?;
        let watcher = Arc::new(Mutex::new(watcher));
        let markers = options.marker_dir.unwrap_or_else(|| root.join(MIA_DIR));
        std::fs::create_dir_all(&markers).map_err(SnapshotError::io("creating", &markers))?;
        let markers =
            dunce::canonicalize(&markers).map_err(SnapshotError::io("watching", &markers))?;
        {
            let mut w = watcher.lock().map_err(|_| lock_poisoned(&root))?;
            w.watch(&markers, RecursiveMode::NonRecursive)
                .map_err(|e| SnapshotError::io("watching", &markers)(std::io::Error::other(e)))?;
            for dir in watched_dirs(&root, &root, &skip) {
                if let Err(e) = w.watch(&dir, RecursiveMode::NonRecursive)
                    && let Some(why) = registration_failure(&dir, &e)
                    && let Ok(mut st) = state.0.lock()
                {
                    st.degraded.get_or_insert(why);
                }
            }
        }
        {
            let state = Arc::clone(&state);
            // Weak: the watcher owns the sender this thread reads from, so
            // a strong reference here would keep both alive for ever (on
            // Windows with every watched directory held open).
            let watcher = Arc::downgrade(&watcher);
            let (root, markers) = (root.clone(), markers.clone());
            std::thread::Builder::new()
                .name("mia-snapshot-watch".into())
                .spawn(move || process_events(rx, (&root, &markers), &skip, &state, &watcher))
                .map_err(SnapshotError::io(
                    "starting the watcher thread for",
                    project,
                ))?;
        }
        Ok(Self {
            root,
            markers,
            state,
            _watcher: watcher,
            sync_counter: Mutex::new(0),
        })
    }

    /// Wait until every event up to now has been processed (a marker file
    /// is written and its event awaited). False on timeout.
    pub fn sync(&self, timeout: Duration) -> bool {
        let n = match self.sync_counter.lock() {
            Ok(mut c) => {
                *c += 1;
                *c
            }
            Err(_) => return false,
        };
        let marker = self.markers.join(format!("{SYNC_PREFIX}{n}"));
        if std::fs::write(&marker, b"").is_err() {
            return false;
        }
        let _cleanup = RemoveOnDrop(marker);
        let deadline = Instant::now() + timeout;
        let (lock, cv) = &*self.state;
        let Ok(mut st) = lock.lock() else {
            return false;
        };
        while st.sync_seen < n {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            match cv.wait_timeout(st, deadline - now) {
                Ok((g, _)) => st = g,
                Err(_) => return false,
            }
        }
        true
    }

    /// Wait until no event arrived for `quiet` (debounce), at most `max`.
    pub fn settle(&self, quiet: Duration, max: Duration) {
        let deadline = Instant::now() + max;
        let (lock, cv) = &*self.state;
        let Ok(mut st) = lock.lock() else { return };
        loop {
            let now = Instant::now();
            let quiet_until = st.last_event.map(|t| t + quiet).unwrap_or(now);
            if quiet_until <= now || now >= deadline {
                return;
            }
            match cv.wait_timeout(st, quiet_until.min(deadline) - now) {
                Ok((g, _)) => st = g,
                Err(_) => return,
            }
        }
    }

    /// Changes since the last call (synced first), and start a new period.
    pub fn take_changes(&self) -> OutsideChanges {
        let synced = self.sync(Duration::from_secs(2));
        let (lock, _) = &*self.state;
        let Ok(mut st) = lock.lock() else {
            return OutsideChanges::Unknown {
                reason: "the watcher state is poisoned".into(),
            };
        };
        let changed = std::mem::take(&mut st.changed);
        if !std::mem::replace(&mut st.primed, true) {
            return OutsideChanges::Unknown {
                reason: "the watcher just started; what changed before is unknown".into(),
            };
        }
        if let Some(reason) = st.broken.take() {
            return OutsideChanges::Unknown { reason };
        }
        if let Some(reason) = &st.degraded {
            return OutsideChanges::Unknown {
                reason: reason.clone(),
            };
        }
        if !synced {
            return OutsideChanges::Unknown {
                reason: "the watcher did not catch up within 2 s".into(),
            };
        }
        OutsideChanges::Known(changed.into_iter().collect())
    }

    /// Start counting from now: call right before a full capture, whose tree
    /// then is the reference the next [`take_changes`](Self::take_changes)
    /// narrows from.
    pub fn prime(&self) {
        if let Ok(mut st) = self.state.0.lock() {
            st.changed.clear();
            st.primed = true;
        }
    }

    /// Whether a take has started a period (the first take cannot know).
    pub fn primed(&self) -> bool {
        self.state.0.lock().is_ok_and(|st| st.primed)
    }

    /// Why the watcher cannot be trusted, if it cannot (a directory could
    /// not be watched): captures then scan the project.
    pub fn degraded(&self) -> Option<String> {
        self.state.0.lock().ok().and_then(|st| st.degraded.clone())
    }

    /// Changes so far, without starting a new period (for the UI).
    pub fn peek(&self) -> Vec<String> {
        let (lock, _) = &*self.state;
        lock.lock()
            .map(|st| st.changed.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// A failed watch registration that matters (not a directory that vanished
/// meanwhile), in words.
fn registration_failure(dir: &Path, e: &notify::Error) -> Option<String> {
    match &e.kind {
        notify::ErrorKind::PathNotFound => None,
        notify::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound => None,
        _ => Some(format!(
            "could not watch {}: {e}; on Linux the inotify limit (fs.inotify.max_user_watches, see `mia-code doctor`) may be too low, so steps scan the project instead",
            dir.display()
        )),
    }
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn lock_poisoned(root: &Path) -> SnapshotError {
    SnapshotError::io("watching", root)(std::io::Error::other("watcher lock poisoned"))
}

/// Directories to watch: the root and every directory a capture would walk.
fn watched_dirs(root: &Path, start: &Path, skip: &Skip) -> Vec<PathBuf> {
    let mut out = vec![start.to_path_buf()];
    let skip = skip.clone();
    let root_owned = root.to_path_buf();
    let walker = ignore::WalkBuilder::new(start)
        .hidden(false)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        // Ignore files above the watched directory are not read: a git
        // worktree inside a directory that ignores everything (mia-code's
        // own worktrees directory) would otherwise watch nothing. More
        // watches, never fewer.
        .parents(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let rel = e
                .path()
                .strip_prefix(&root_owned)
                .map(|p| p.to_string_lossy().replace('\\', "/"));
            match rel {
                Ok(rel) if !rel.is_empty() => !skip.skips(&rel),
                _ => true,
            }
        })
        .build();
    for e in walker.flatten() {
        if e.depth() > 0 && e.file_type().is_some_and(|t| t.is_dir()) {
            out.push(e.into_path());
        }
    }
    out
}

fn process_events(
    rx: mpsc::Receiver<notify::Result<notify::Event>>,
    (root, mia): (&Path, &Path),
    skip: &Skip,
    state: &Arc<(Mutex<State>, Condvar)>,
    watcher: &std::sync::Weak<Mutex<RecommendedWatcher>>,
) {
    for ev in rx {
        let (lock, cv) = &**state;
        let mut new_dirs = Vec::new();
        {
            let Ok(mut st) = lock.lock() else { return };
            match ev {
                Err(e) => st.broken = Some(format!("the file watcher failed: {e}")),
                Ok(ev) => {
                    if ev.need_rescan() {
                        st.broken =
                            Some("the file watcher overflowed; a full scan is needed".into());
                    }
                    for p in &ev.paths {
                        if p.parent() == Some(mia) {
                            if let Some(n) = p
                                .file_name()
                                .and_then(|f| f.to_str())
                                .and_then(|f| f.strip_prefix(SYNC_PREFIX))
                                .and_then(|n| n.parse::<u64>().ok())
                            {
                                st.sync_seen = st.sync_seen.max(n);
                            }
                            continue;
                        }
                        let Ok(rel) = p.strip_prefix(root) else {
                            continue;
                        };
                        let rel = crate::names::path_enc(rel);
                        if rel.is_empty() {
                            if matches!(
                                ev.kind,
                                EventKind::Remove(_)
                                    | EventKind::Modify(notify::event::ModifyKind::Name(_))
                            ) {
                                // The directory itself went (removed or
                                // moved): its watches are gone with it, so
                                // the watcher can never vouch again.
                                st.degraded.get_or_insert_with(|| {
                                    format!("{} was removed or moved", root.display())
                                });
                            }
                            continue;
                        }
                        if skip.skips(&rel) {
                            continue;
                        }
                        if matches!(ev.kind, EventKind::Access(_)) {
                            continue;
                        }
                        // A directory made here, or moved in (a rename's
                        // "to" side): watch it and report what it holds.
                        if matches!(
                            ev.kind,
                            EventKind::Create(_)
                                | EventKind::Modify(notify::event::ModifyKind::Name(_))
                        ) && p.is_dir()
                        {
                            new_dirs.push(p.clone());
                        }
                        st.changed.insert(rel);
                        st.last_event = Some(Instant::now());
                    }
                }
            }
            cv.notify_all();
        }
        let Some(watcher) = watcher.upgrade() else {
            // The ProjectWatcher was dropped: stop.
            return;
        };
        if !new_dirs.is_empty()
            && let Ok(mut w) = watcher.lock()
        {
            // A directory made inside a new one after the walk below but
            // before its watch (`mkdir -p a/b && echo > a/b/c`) is found by
            // the read that follows the watch, and is walked in turn.
            let mut pending = new_dirs;
            let mut seen = std::collections::HashSet::new();
            while let Some(d) = pending.pop() {
                for sub in watched_dirs(root, &d, skip) {
                    if !seen.insert(sub.clone()) {
                        continue;
                    }
                    if let Err(e) = w.watch(&sub, RecursiveMode::NonRecursive)
                        && let Some(why) = registration_failure(&sub, &e)
                        && let Ok(mut st) = lock.lock()
                    {
                        st.degraded.get_or_insert(why);
                    }
                    // Files created before the watch was added.
                    let Ok(rd) = std::fs::read_dir(&sub) else {
                        continue;
                    };
                    let Ok(mut st) = lock.lock() else { continue };
                    for e in rd.flatten() {
                        let path = e.path();
                        let Ok(rel) = path.strip_prefix(root) else {
                            continue;
                        };
                        let rel = crate::names::path_enc(rel);
                        if e.file_type().is_ok_and(|t| t.is_dir())
                            && !seen.contains(&path)
                            && !skip.skips(&rel)
                        {
                            pending.push(path);
                        }
                        st.changed.insert(rel);
                    }
                }
            }
        }
    }
}

impl crate::SnapshotRepo {
    /// A capture for a step that cannot name its paths (bash), narrowed to
    /// the watcher's outside changes while it is healthy; a full scan when
    /// it overflowed, failed or could not catch up.
    pub fn capture_with_watcher(
        &mut self,
        ctx: &crate::CaptureContext,
        watcher: &ProjectWatcher,
    ) -> Result<crate::Snapshot> {
        match self.watched_paths(watcher) {
            Some(paths) if self.latest().is_some() => self.capture(ctx, Some(&paths)),
            _ => self.capture(ctx, None),
        }
    }

    /// The watcher's changes as capture paths, minus what a scan would skip
    /// (gitignored files); None when a full scan is needed instead.
    pub(crate) fn watched_paths(&self, watcher: &ProjectWatcher) -> Option<Vec<PathBuf>> {
        match watcher.take_changes() {
            OutsideChanges::Known(paths) if paths.len() <= MAX_NARROWED_PATHS => Some(
                paths
                    .into_iter()
                    .filter(|p| {
                        !crate::scan::scan_skips(&self.project, p, &self.config.excluded_dirs)
                    })
                    .map(|p| crate::names::path_of(&p))
                    .collect(),
            ),
            OutsideChanges::Known(paths) => {
                tracing::info!(
                    n = paths.len(),
                    "many outside changes, scanning the project"
                );
                None
            }
            OutsideChanges::Unknown { reason } => {
                tracing::info!(%reason, "watcher unavailable, scanning the project");
                None
            }
        }
    }

    /// [`begin_step`](Self::begin_step) for a step that cannot name its
    /// paths (bash), narrowed by the watcher; starts a new watch period.
    pub fn begin_step_with_watcher(
        &mut self,
        ctx: crate::CaptureContext,
        paths: Option<&[PathBuf]>,
        watcher: &ProjectWatcher,
    ) -> Result<crate::PendingStep> {
        if paths.is_some() {
            return self.begin_step(ctx, paths);
        }
        // Changes made while waiting for another step belong to it: take
        // the watcher's list only once the step lock is held.
        let lock = self.acquire_scan_lock(&ctx)?;
        let narrow = self.watched_paths(watcher);
        self.begin_step_narrowed(ctx, None, narrow, Some(lock))
    }

    /// [`finish_step`](Self::finish_step) that, for a step without named
    /// paths, captures only what the watcher saw change during the step
    /// (on top of the "before" tree), or scans when it cannot tell.
    pub fn finish_step_with_watcher(
        &mut self,
        pending: crate::PendingStep,
        watcher: &ProjectWatcher,
    ) -> Result<crate::StepRecord> {
        let narrow = if pending.paths.is_none() {
            self.watched_paths(watcher)
        } else {
            None
        };
        self.finish_step_narrowed(pending, narrow)
    }
}

/// Above this many watcher-reported paths a scan is cheaper than checking
/// each against the ignore rules.
const MAX_NARROWED_PATHS: usize = 2000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_internal_and_excluded_dirs() {
        let ex = vec!["node_modules".to_string()];
        assert!(is_skipped(".git/index", &ex));
        assert!(is_skipped(".mia-code/snapshots/x", &ex));
        assert!(is_skipped("web/node_modules/a.js", &ex));
        assert!(!is_skipped("src/main.rs", &ex));
    }
}
