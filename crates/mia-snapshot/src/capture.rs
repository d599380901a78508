//! Capturing the working tree into the hidden repo.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use git2::{ObjectType, Oid, Repository};

use crate::cache::{CacheEntry, Content, FastMap, MODE_LINK, StatCache, StatInfo};
use crate::error::{Result, SnapshotError};
use crate::model::{CaptureContext, CaptureMode, ExcludeReason, ExcludedFile, Snapshot, now_ms};
use crate::pack::{PackBuf, store_pack};
use crate::repo::{MIA_DIR, SnapshotRepo};
use crate::scan;
use crate::tree::{self, Change};

/// Where new objects go: the object store directly, or a pack being built.
pub(crate) enum Sink<'a, 'r> {
    Odb(&'a git2::Odb<'r>),
    Pack(&'a std::cell::RefCell<PackBuf>),
}

impl Sink<'_, '_> {
    pub(crate) fn write(&self, kind: ObjectType, data: &[u8]) -> Result<Oid, git2::Error> {
        match self {
            Self::Odb(odb) => odb.write(kind, data),
            Self::Pack(p) => p.borrow_mut().add(kind, data),
        }
    }
}

/// From this many files to hash in one scan on, objects go to one pack.
const BULK_THRESHOLD: usize = 1000;
/// Flush the in-memory pack at this size (bounds memory on huge trees).
const BULK_FLUSH_BYTES: u64 = 256 * 1024 * 1024;

/// One file or symlink found by a walk.
#[derive(Debug)]
pub(crate) struct ScanItem {
    pub rel: Vec<u8>,
    pub abs: PathBuf,
    pub stat: StatInfo,
}

/// The result of a capture before it is recorded.
#[derive(Debug)]
pub(crate) struct Captured {
    pub tree: Oid,
    pub files: u64,
    pub excluded: Vec<ExcludedFile>,
    pub mode: CaptureMode,
}

/// What the project's own git index says about a file (first snapshot only).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SeedEntry {
    size: u32,
    mtime: (i32, u32),
    ctime: (i32, u32),
    ino: u32,
    mode: u32,
    oid: Oid,
}

impl SeedEntry {
    fn matches(&self, s: &StatInfo) -> bool {
        let ns_ok = |seed_ns: u32, ns: u32| seed_ns == 0 || seed_ns == ns;
        self.size == s.size as u32
            && i64::from(self.mtime.0) == s.mtime_s
            && ns_ok(self.mtime.1, s.mtime_ns)
            && i64::from(self.ctime.0) == s.ctime_s
            && ns_ok(self.ctime.1, s.ctime_ns)
            && (self.ino == 0 || self.ino == s.ino as u32)
            && self.mode == s.mode
    }
}

pub(crate) fn bytes_to_path(b: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(b))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(b).into_owned())
    }
}

pub(crate) fn rel_bytes(rel: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        rel.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        rel.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

fn system_time_parts(t: SystemTime) -> (i64, u32) {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| {
            (
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                d.subsec_nanos(),
            )
        })
        .unwrap_or((0, 0))
}

fn budget_err(start: Instant, budget: Duration, stage: &'static str) -> SnapshotError {
    SnapshotError::TimeBudgetExceeded {
        budget_ms: u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
        elapsed_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
        stage,
    }
}

/// Tracks a capture's time budget.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub start: Instant,
    pub limit: Option<Duration>,
}

impl Budget {
    pub fn unlimited() -> Self {
        Self {
            start: Instant::now(),
            limit: None,
        }
    }
    fn deadline(&self) -> Option<Instant> {
        self.limit.map(|l| self.start + l)
    }
    fn check(&self, stage: &'static str) -> Result<()> {
        match self.limit {
            Some(l) if self.start.elapsed() > l => Err(budget_err(self.start, l, stage)),
            _ => Ok(()),
        }
    }
}

impl SnapshotRepo {
    /// Capture the project: with `paths`, refresh only those on top of the
    /// latest snapshot (what write/edit/delete tools do); without, scan the
    /// whole tree (bash). Runs under the repo lock and the configured time
    /// budget; past the budget it fails with
    /// [`SnapshotError::TimeBudgetExceeded`] (see
    /// [`SnapshotError::is_unavailable`]) and the step proceeds without undo.
    pub fn capture(&mut self, ctx: &CaptureContext, paths: Option<&[PathBuf]>) -> Result<Snapshot> {
        let budget = Budget {
            start: Instant::now(),
            limit: Some(self.config.time_budget),
        };
        let _lock = self.lock_until(budget.deadline())?;
        let snap = self.capture_locked(ctx, paths, budget)?;
        Ok(snap)
    }

    /// Like [`capture`](Self::capture) with no time budget (reverts, the
    /// CLI's explicit `snapshot capture`).
    pub fn capture_unbounded(
        &mut self,
        ctx: &CaptureContext,
        paths: Option<&[PathBuf]>,
    ) -> Result<Snapshot> {
        let _lock = self.lock_until(None)?;
        self.capture_locked(ctx, paths, Budget::unlimited())
    }

    pub(crate) fn capture_locked(
        &mut self,
        ctx: &CaptureContext,
        paths: Option<&[PathBuf]>,
        budget: Budget,
    ) -> Result<Snapshot> {
        Ok(self.capture_recorded_locked(ctx, paths, budget)?.0)
    }

    /// Capture, record as the latest snapshot of this work tree, and return
    /// it with every file the latest snapshot now lacks because it could
    /// not be stored (the whole list; the snapshot's own list is capped).
    pub(crate) fn capture_recorded_locked(
        &mut self,
        ctx: &CaptureContext,
        paths: Option<&[PathBuf]>,
        budget: Budget,
    ) -> Result<(Snapshot, Vec<ExcludedFile>)> {
        let captured = self.capture_tree(paths, budget)?;
        self.keep_for(ctx.session_id.as_deref(), captured.tree)?;
        self.set_latest(captured.tree, captured.files)?;
        let named = match (captured.mode, paths) {
            (CaptureMode::Paths, Some(ps)) => Some(
                ps.iter()
                    .map(|p| self.relative_path(p))
                    .collect::<Result<Vec<_>>>()?,
            ),
            _ => None,
        };
        let uncaptured = self.update_uncaptured(named.as_deref(), &captured.excluded)?;
        let total = captured.excluded.len() as u64;
        let mut excluded = captured.excluded;
        excluded.truncate(self.config.max_listed_exclusions);
        let snap = Snapshot {
            hash: captured.tree.to_string(),
            files: captured.files,
            created_at: now_ms(),
            session_id: ctx.session_id.clone(),
            message_id: ctx.message_id.clone(),
            tool_call_id: ctx.tool_call_id.clone(),
            excluded,
            excluded_total: total,
            mode: captured.mode,
            ms: u64::try_from(budget.start.elapsed().as_millis()).unwrap_or(u64::MAX),
        };
        Ok((snap, uncaptured))
    }

    /// The files the latest snapshot of this work tree could not store, as
    /// kept in its state directory: replaced by a full scan (`named` None),
    /// updated for the named paths by a known-path capture. Returns the
    /// whole set.
    pub(crate) fn update_uncaptured(
        &self,
        named: Option<&[String]>,
        excluded: &[ExcludedFile],
    ) -> Result<Vec<ExcludedFile>> {
        let path = self.state.join("uncaptured");
        let old: Vec<ExcludedFile> = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let mut set: BTreeMap<String, ExcludedFile> = match named {
            None => BTreeMap::new(),
            Some(rels) => old
                .iter()
                .filter(|e| {
                    let p = e.path.trim_end_matches('/');
                    !rels
                        .iter()
                        .any(|r| r.is_empty() || p == r || p.starts_with(&format!("{r}/")))
                })
                .map(|e| (e.path.clone(), e.clone()))
                .collect(),
        };
        for e in excluded {
            set.insert(e.path.clone(), e.clone());
        }
        let new: Vec<ExcludedFile> = set.into_values().collect();
        if new != old {
            let bytes = serde_json::to_vec(&new).map_err(|e| {
                SnapshotError::io("writing", &path)(std::io::Error::other(e.to_string()))
            })?;
            crate::repo::atomic_write(&path, &bytes)?;
        }
        Ok(new)
    }

    /// Build the tree for the current state without recording it as a
    /// snapshot (no ref, latest unchanged): used for diffs against the
    /// working tree.
    pub(crate) fn capture_tree(
        &mut self,
        paths: Option<&[PathBuf]>,
        budget: Budget,
    ) -> Result<Captured> {
        match (paths, self.latest()) {
            (Some(paths), Some((base, count))) => {
                self.capture_paths_with_base(base, count, paths, budget)
            }
            _ => self.full_scan(budget),
        }
    }

    pub(crate) fn capture_paths_with_base(
        &mut self,
        base: Oid,
        base_count: u64,
        paths: &[PathBuf],
        budget: Budget,
    ) -> Result<Captured> {
        let mut rels = Vec::with_capacity(paths.len());
        for p in paths {
            let rel = self.relative_path(p)?;
            if rel.is_empty() {
                // The whole project was named: that is a full scan.
                return self.full_scan(budget);
            }
            rels.push(rel);
        }
        let base_tree = self.repo.find_tree(base).map_err(self.git_err())?;
        let odb = self.repo.odb().map_err(self.git_err())?;
        let mut changes: BTreeMap<Vec<u8>, Change> = BTreeMap::new();
        let mut excluded = Vec::new();
        for rel in rels {
            budget.check("hashing named paths")?;
            if is_internal(&rel) {
                continue;
            }
            if let Some(reason) = self.blocked_ancestor(&rel) {
                excluded.push(ExcludedFile {
                    path: rel.clone(),
                    reason,
                });
                continue;
            }
            let abs = crate::names::abs(&self.project, &rel);
            let meta = match std::fs::symlink_metadata(&abs) {
                // The sandbox's mount point is not the person's file.
                Ok(m) if crate::scan::is_sandbox_placeholder(&m) => {
                    changes.insert(crate::names::dec(&rel), Change::Remove);
                    continue;
                }
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    changes.insert(crate::names::dec(&rel), Change::Remove);
                    continue;
                }
                Err(e) => return Err(SnapshotError::io("reading", &abs)(e)),
            };
            if meta.is_dir() {
                // A directory: refresh everything under it.
                let (items, mut ex) = self.walk(Some(&abs), budget)?;
                excluded.append(&mut ex);
                let prefix = format!("{rel}/");
                let mut seen = std::collections::HashSet::new();
                for item in items {
                    match self.content_for(&Sink::Odb(&odb), &item, None)? {
                        Some(Content::Stored(oid)) => {
                            seen.insert(item.rel.clone());
                            changes.insert(
                                item.rel,
                                Change::Put {
                                    mode: item.stat.mode,
                                    oid,
                                },
                            );
                        }
                        Some(other) => {
                            excluded.push(excluded_for(&item.rel, other));
                            changes.insert(item.rel, Change::Remove);
                        }
                        None => {}
                    }
                }
                if let Ok(entry) = base_tree.get_path(&crate::names::path_of(&rel)) {
                    if entry.kind() == Some(ObjectType::Tree) {
                        let sub = self.repo.find_tree(entry.id()).map_err(self.git_err())?;
                        for path in tree::flatten(&self.repo, &sub, &prefix)
                            .map_err(self.git_err())?
                            .into_keys()
                        {
                            if !seen.contains(path.as_bytes()) {
                                changes
                                    .entry(crate::names::dec(&path))
                                    .or_insert(Change::Remove);
                            }
                        }
                    } else {
                        changes.insert(crate::names::dec(&rel), Change::Remove);
                    }
                }
                continue;
            }
            if !meta.is_file() && !meta.file_type().is_symlink() {
                excluded.push(ExcludedFile {
                    path: rel.clone(),
                    reason: ExcludeReason::SpecialFile,
                });
                changes.insert(crate::names::dec(&rel), Change::Remove);
                continue;
            }
            let item = ScanItem {
                rel: crate::names::dec(&rel),
                abs,
                stat: StatInfo::from_metadata(&meta),
            };
            match self.content_for(&Sink::Odb(&odb), &item, None)? {
                Some(Content::Stored(oid)) => {
                    changes.insert(
                        item.rel,
                        Change::Put {
                            mode: item.stat.mode,
                            oid,
                        },
                    );
                }
                Some(other) => {
                    excluded.push(excluded_for(&item.rel, other));
                    changes.insert(item.rel, Change::Remove);
                }
                None => {
                    changes.insert(item.rel, Change::Remove);
                }
            }
        }
        let (tree, delta) =
            tree::apply_changes(&self.repo, Some(&base_tree), &changes).map_err(self.git_err())?;
        let files =
            u64::try_from(i64::try_from(base_count).unwrap_or(i64::MAX) + delta).unwrap_or(0);
        Ok(Captured {
            tree,
            files,
            excluded,
            mode: CaptureMode::Paths,
        })
    }

    /// Is some ancestor of `rel` a symlink or an excluded special place?
    fn blocked_ancestor(&self, rel: &str) -> Option<ExcludeReason> {
        let mut cur = self.project.clone();
        let parts: Vec<&str> = rel.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            cur.push(part);
            match std::fs::symlink_metadata(&cur) {
                Ok(m) if m.file_type().is_symlink() => return Some(ExcludeReason::BeyondSymlink),
                Ok(m) if m.is_dir() && cur.join(".git").exists() => {
                    return Some(ExcludeReason::NestedRepo);
                }
                _ => {}
            }
        }
        None
    }

    /// Decide what to store for one file: its blob (written now), or why it
    /// is left out. `None` when the file vanished while we looked.
    pub(crate) fn content_for(
        &self,
        sink: &Sink<'_, '_>,
        item: &ScanItem,
        seed: Option<&SeedEntry>,
    ) -> Result<Option<Content>> {
        if item.stat.mode == MODE_LINK {
            let target = match std::fs::read_link(&item.abs) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(_) => return Ok(Some(Content::Unreadable)),
            };
            let bytes = rel_bytes(&target);
            let oid = sink
                .write(ObjectType::Blob, &bytes)
                .map_err(self.git_err())?;
            return Ok(Some(Content::Stored(oid)));
        }
        // Binary files are stored like any other (undo must be able to put
        // them back); only the size cap keeps content out.
        if item.stat.size > self.config.max_file_size {
            return Ok(Some(Content::TooLarge));
        }
        if let Some(seed) = seed
            && seed.matches(&item.stat)
        {
            return Ok(Some(Content::Stored(seed.oid)));
        }
        let mut file = match std::fs::File::open(&item.abs) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // Permission denied, a directory swapped in mid-scan, ...: noted,
            // not fatal for the whole capture.
            Err(_) => return Ok(Some(Content::Unreadable)),
        };
        let mut bytes = Vec::with_capacity(usize::try_from(item.stat.size).unwrap_or(0));
        if file.read_to_end(&mut bytes).is_err() {
            return Ok(Some(Content::Unreadable));
        }
        if bytes.len() as u64 > self.config.max_file_size {
            return Ok(Some(Content::TooLarge));
        }
        let oid = sink
            .write(ObjectType::Blob, &bytes)
            .map_err(self.git_err())?;
        Ok(Some(Content::Stored(oid)))
    }

    /// Walk the project (or one directory of it) honouring `.gitignore`,
    /// the built-in excluded directories, nested repos and `.git`.
    pub(crate) fn walk(
        &self,
        sub: Option<&Path>,
        budget: Budget,
    ) -> Result<(Vec<ScanItem>, Vec<ExcludedFile>)> {
        let root = self.project.clone();
        let start_dir = sub.map(Path::to_path_buf).unwrap_or_else(|| root.clone());
        let excluded: Arc<Mutex<Vec<ExcludedFile>>> = Arc::default();
        let excluded_dirs: Arc<Vec<String>> = Arc::new(self.config.excluded_dirs.clone());
        let mut wb = ignore::WalkBuilder::new(&start_dir);
        wb.hidden(false)
            .ignore(false)
            .git_ignore(true)
            .git_global(true)
            .git_exclude(true)
            .require_git(false)
            .parents(true)
            .follow_links(false)
            .threads(2);
        {
            let excluded = Arc::clone(&excluded);
            let root = root.clone();
            let start_dir = start_dir.clone();
            wb.filter_entry(move |e| {
                let name = e.file_name();
                if name == ".git" {
                    return false;
                }
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                if !is_dir || e.path() == start_dir {
                    return true;
                }
                if name == MIA_DIR && e.path().parent() == Some(root.as_path()) {
                    return false;
                }
                let rel = e
                    .path()
                    .strip_prefix(&root)
                    .map(rel_bytes)
                    .unwrap_or_default();
                let rel = crate::names::enc(&rel);
                let reason = if excluded_dirs.iter().any(|d| name == d.as_str()) {
                    Some(ExcludeReason::ExcludedDir)
                } else if e.path().join(".git").exists() {
                    Some(ExcludeReason::NestedRepo)
                } else {
                    None
                };
                if let Some(reason) = reason {
                    if let Ok(mut v) = excluded.lock() {
                        v.push(ExcludedFile {
                            path: format!("{rel}/"),
                            reason,
                        });
                    }
                    return false;
                }
                true
            });
        }
        let timed_out = Arc::new(AtomicBool::new(false));
        let items: Arc<Mutex<Vec<ScanItem>>> = Arc::default();
        let deadline = budget.deadline();
        wb.build_parallel().run(|| {
            let timed_out = Arc::clone(&timed_out);
            let root = root.clone();
            let mut w = WalkWorker {
                items: Arc::clone(&items),
                excluded: Arc::clone(&excluded),
                local: Vec::new(),
                local_ex: Vec::new(),
            };
            Box::new(move |res| {
                if deadline.is_some_and(|d| Instant::now() > d) {
                    timed_out.store(true, Ordering::Relaxed);
                    return ignore::WalkState::Quit;
                }
                let Ok(entry) = res else {
                    return ignore::WalkState::Continue;
                };
                let Some(ft) = entry.file_type() else {
                    return ignore::WalkState::Continue;
                };
                if ft.is_dir() {
                    return ignore::WalkState::Continue;
                }
                let rel = entry
                    .path()
                    .strip_prefix(&root)
                    .map(rel_bytes)
                    .unwrap_or_default();
                if ft.is_file() || ft.is_symlink() {
                    if let Ok(m) = std::fs::symlink_metadata(entry.path())
                        && !crate::scan::is_sandbox_placeholder(&m)
                    {
                        w.local.push(ScanItem {
                            rel,
                            abs: entry.path().to_path_buf(),
                            stat: StatInfo::from_metadata(&m),
                        });
                    }
                } else {
                    w.local_ex.push(ExcludedFile {
                        path: crate::names::enc(&rel),
                        reason: ExcludeReason::SpecialFile,
                    });
                }
                if w.local.len() >= 1024 {
                    w.flush();
                }
                ignore::WalkState::Continue
            })
        });
        if timed_out.load(Ordering::Relaxed) {
            return Err(budget_err(
                budget.start,
                budget.limit.unwrap_or_default(),
                "scanning the project",
            ));
        }
        let items = std::mem::take(&mut *items.lock().map_err(|_| poisoned())?);
        let excluded = std::mem::take(&mut *excluded.lock().map_err(|_| poisoned())?);
        Ok((items, excluded))
    }

    fn load_cache(&mut self) -> StatCache {
        match self.cache.take() {
            Some(c) => c,
            None => StatCache::load(&self.cache_path()),
        }
    }

    /// Scan everything; hash only what the stat cache cannot vouch for;
    /// rewrite only changed trees.
    pub(crate) fn full_scan(&mut self, budget: Budget) -> Result<Captured> {
        let scan_started = system_time_parts(SystemTime::now());
        let t0 = Instant::now();
        let mut cache = self.load_cache();
        let load_t = t0.elapsed();
        // The cached directory ids are only trusted while the tree they
        // belong to is still alive in the repo.
        if let Some(t) = cache.tree {
            if self.repo.find_tree(t).is_err() {
                cache.tree = None;
                cache.dirs.clear();
            }
        } else {
            cache.dirs.clear();
        }
        let mut mode = CaptureMode::FullScan;
        let want_seed = cache.files.is_empty() && self.latest().is_none();
        let t1 = Instant::now();
        // The project's index is read while the tree is walked.
        let (seeded, mut out) = std::thread::scope(|s| {
            let project = &self.project;
            let reader = want_seed.then(|| s.spawn(move || read_project_seed(project)));
            let out = scan::scan(
                &self.project,
                &self.config.excluded_dirs,
                &cache,
                budget.deadline(),
            );
            (reader.and_then(|h| h.join().ok()).flatten(), out)
        });
        let seed = match seeded {
            Some((map, objects)) if self.borrow_objects(&objects) => {
                mode = CaptureMode::Seeded;
                tracing::debug!(entries = map.len(), "seeded from the project index");
                Some(map)
            }
            _ => None,
        };
        if out.timed_out {
            self.cache = Some(cache);
            return Err(budget_err(
                budget.start,
                budget.limit.unwrap_or_default(),
                "scanning the project",
            ));
        }
        let scan_t = t1.elapsed();
        let t2 = Instant::now();
        let partial = cache.tree.is_none();
        let mut excluded = std::mem::take(&mut out.excluded);
        let mut changes = 0usize;
        let mut total = 0usize;
        let mut n = 0usize;
        // Many files to hash (a first snapshot, a big checkout): write the
        // objects into memory and then as one pack instead of thousands of
        // loose files.
        let misses = out
            .dirs
            .values()
            .map(|d| d.files.iter().filter(|f| f.hit.is_none()).count())
            .sum::<usize>();
        let main_odb = self.repo.odb().map_err(self.git_err())?;
        let pack = std::cell::RefCell::new(PackBuf::default());
        let sink = if misses >= BULK_THRESHOLD {
            Sink::Pack(&pack)
        } else {
            Sink::Odb(&main_odb)
        };
        let odb = &main_odb;
        let dir = self.dir.clone();
        let flush = || -> Result<()> {
            let bytes = {
                let mut p = pack.borrow_mut();
                if p.is_empty() {
                    return Ok(());
                }
                p.take_pack()
            };
            store_pack(&main_odb, &bytes).map_err(|source| SnapshotError::Git {
                repo: dir.clone(),
                source,
            })
        };
        {
            for d in out.dirs.values_mut() {
                for f in &mut d.files {
                    n += 1;
                    let hit = f.hit.filter(|c| match c {
                        // A partial cache may name objects gc has dropped.
                        Content::Stored(oid) if partial => odb.exists(*oid),
                        _ => true,
                    });
                    let content = match hit {
                        Some(c) => Some(c),
                        None => {
                            if n.is_multiple_of(32)
                                && let Err(e) = budget.check("hashing changed files")
                            {
                                // Keep what was hashed so the next capture resumes.
                                flush()?;
                                cache.tree = None;
                                cache.dirs.clear();
                                cache.scan_started = scan_started;
                                let _ = cache.save(&self.cache_path());
                                self.cache = Some(cache);
                                return Err(e);
                            }
                            let s = seed.as_ref().and_then(|s| s.get(&f.rel));
                            let seeded = s.is_some_and(|s| s.matches(&f.stat));
                            let c = match s {
                                // The project's index vouches for it: no I/O.
                                Some(se)
                                    if seeded
                                        && f.stat.mode != MODE_LINK
                                        && f.stat.size <= self.config.max_file_size =>
                                {
                                    Some(Content::Stored(se.oid))
                                }
                                _ => {
                                    let item = ScanItem {
                                        rel: f.rel.clone(),
                                        abs: self.project.join(bytes_to_path(&f.rel)),
                                        stat: f.stat,
                                    };
                                    self.content_for(&sink, &item, s)?
                                }
                            };
                            d.dirty = true;
                            if pack.borrow().len() as u64 > BULK_FLUSH_BYTES {
                                flush()?;
                            }
                            if let Some(c) = c.filter(|c| *c != Content::Unreadable) {
                                cache.files.insert(
                                    f.rel.clone(),
                                    CacheEntry {
                                        stat: f.stat,
                                        content: c,
                                    },
                                );
                                changes += 1;
                            }
                            c
                        }
                    };
                    f.hit = content;
                    match content {
                        Some(Content::Stored(_)) => total += 1,
                        Some(other) => excluded.push(excluded_for(&f.rel, other)),
                        None => {}
                    }
                }
            }
        }
        // Files that disappeared since the cached scan.
        let mut dirty: std::collections::HashSet<Vec<u8>> = std::collections::HashSet::new();
        let present: usize = out
            .dirs
            .values()
            .map(|d| {
                d.files
                    .iter()
                    .filter(|f| f.hit.is_some_and(|c| c != Content::Unreadable))
                    .count()
            })
            .sum();
        if cache.files.len() != present {
            let keep: std::collections::HashSet<&[u8]> = out
                .dirs
                .values()
                .flat_map(|d| {
                    d.files
                        .iter()
                        .filter(|f| f.hit.is_some_and(|c| c != Content::Unreadable))
                        .map(|f| f.rel.as_slice())
                })
                .collect();
            let before = cache.files.len();
            cache.files.retain(|k, _| {
                let kept = keep.contains(k.as_slice());
                if !kept {
                    // Every ancestor of a vanished file must be rebuilt.
                    let mut p = k.as_slice();
                    loop {
                        p = tree::split_parent(p).0;
                        dirty.insert(p.to_vec());
                        if p.is_empty() {
                            break;
                        }
                    }
                }
                kept
            });
            changes += before - cache.files.len();
        }
        let resolve_t = t2.elapsed();
        let t3 = Instant::now();
        let (root, visited, changed_dirs, new_trees) =
            tree::build_scanned(&sink, &main_odb, &out.dirs, &cache.dirs, &dirty)
                .map_err(self.git_err())?;
        let _ = new_trees;
        flush()?;
        if cache.tree != Some(root) {
            changes += 1;
        }
        for (rel, oid) in changed_dirs {
            cache.dirs.insert(rel, oid);
        }
        if cache.dirs.len() != visited.len() {
            let keep: std::collections::HashSet<&[u8]> =
                visited.iter().map(Vec::as_slice).collect();
            cache.dirs.retain(|k, _| keep.contains(k.as_slice()));
        }
        let build_t = t3.elapsed();
        let t4 = Instant::now();
        let had_saved = self.cache_path().exists() && !partial;
        cache.tree = Some(root);
        self.set_ref(&self.wt_ref("scan"), root)?;
        // Writing the cache costs ~20 ms at 80k files: an in-process owner
        // keeps it in memory, and the file is refreshed once enough changed
        // (a stale file only costs a few re-hashes; its tree stays alive via
        // its own ref).
        if changes > 0 && (changes >= 64 || !had_saved) {
            cache.scan_started = scan_started;
            cache.save(&self.cache_path())?;
            self.set_ref(&self.wt_ref("scan-saved"), root)?;
        }
        self.cache = Some(cache);
        tracing::debug!(
            ?load_t,
            ?scan_t,
            ?resolve_t,
            ?build_t,
            finish_t = ?t4.elapsed(),
            changes,
            "full scan"
        );
        excluded.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Captured {
            tree: root,
            files: total as u64,
            excluded,
            mode,
        })
    }

    /// First snapshot of a git project: trust the project's index for files
    /// whose stat still matches it, and borrow its objects (alternates)
    /// instead of hashing every file. Skipped when git would transform file
    /// content (autocrlf, filters/eol attributes) for any file.
    fn borrow_objects(&self, objects_str: &str) -> bool {
        let Ok(odb) = self.repo.odb() else {
            return false;
        };
        if odb.add_disk_alternate(objects_str).is_err() {
            return false;
        }
        let alt = self.dir.join("objects/info/alternates");
        let existing = std::fs::read_to_string(&alt).unwrap_or_default();
        if !existing.lines().any(|l| l == objects_str) {
            let _ = std::fs::create_dir_all(self.dir.join("objects/info"));
            if std::fs::write(&alt, format!("{existing}{objects_str}\n")).is_err() {
                return false;
            }
        }
        true
    }
}

/// The project's git index as seed entries plus its objects directory (to
/// borrow as an alternate), or None when seeding is not safe.
fn read_project_seed(project: &Path) -> Option<(FastMap<Vec<u8>, SeedEntry>, String)> {
    {
        let project_repo = Repository::open(project).ok()?;
        let workdir = dunce::canonicalize(project_repo.workdir()?).ok()?;
        if workdir != project {
            return None;
        }
        let cfg = project_repo.config().ok()?;
        if let Ok(v) = cfg.get_string("core.autocrlf")
            && !matches!(
                v.to_ascii_lowercase().as_str(),
                "false" | "no" | "off" | "0"
            )
        {
            return None;
        }
        let index_path = project_repo.path().join("index");
        let index_mtime = std::fs::metadata(&index_path).ok()?.modified().ok()?;
        let (index_s, index_ns) = system_time_parts(index_mtime);
        let index = project_repo.index().ok()?;
        // One pass over the index (each entry is converted once).
        let entries: Vec<git2::IndexEntry> = index.iter().collect();
        let has_attributes = project_repo.commondir().join("info/attributes").exists()
            || cfg.get_string("core.attributesFile").is_ok()
            || entries.iter().any(|e| e.path.ends_with(b".gitattributes"));
        let objects = dunce::canonicalize(project_repo.commondir().join("objects")).ok()?;
        let objects_str = objects.to_str()?.to_string();
        let mut out = FastMap::with_capacity_and_hasher(index.len(), Default::default());
        for e in entries {
            let stage = (e.flags >> 12) & 0x3;
            // Intent-to-add and skip-worktree entries do not describe the file.
            if stage != 0 || e.flags_extended & (0x2000 | 0x4000) != 0 {
                continue;
            }
            if !tree::is_file_mode(e.mode) {
                continue;
            }
            // Racily clean: modified in the same instant the index was written.
            if (i64::from(e.mtime.seconds()), e.mtime.nanoseconds()) >= (index_s, index_ns) {
                continue;
            }
            if has_attributes {
                let path = bytes_to_path(&e.path);
                let transformed = [
                    "filter",
                    "text",
                    "eol",
                    "crlf",
                    "ident",
                    "working-tree-encoding",
                ]
                .iter()
                .any(|attr| {
                    project_repo
                        .get_attr(&path, attr, git2::AttrCheckFlags::FILE_THEN_INDEX)
                        .ok()
                        .flatten()
                        .is_some_and(|v| {
                            !matches!(
                                git2::AttrValue::from_string(Some(v)),
                                git2::AttrValue::False
                            )
                        })
                });
                if transformed {
                    continue;
                }
            }
            out.insert(
                e.path,
                SeedEntry {
                    size: e.file_size,
                    mtime: (e.mtime.seconds(), e.mtime.nanoseconds()),
                    ctime: (e.ctime.seconds(), e.ctime.nanoseconds()),
                    ino: e.ino,
                    mode: e.mode,
                    oid: e.id,
                },
            );
        }
        if out.is_empty() {
            return None;
        }
        // The caller borrows the project's objects; gc copies them in later.
        Some((out, objects_str))
    }
}

/// Per-thread buffer of a parallel walk; flushed when full and when the
/// walker drops it at the end.
struct WalkWorker {
    items: Arc<Mutex<Vec<ScanItem>>>,
    excluded: Arc<Mutex<Vec<ExcludedFile>>>,
    local: Vec<ScanItem>,
    local_ex: Vec<ExcludedFile>,
}

impl WalkWorker {
    fn flush(&mut self) {
        if let Ok(mut v) = self.items.lock() {
            v.append(&mut self.local);
        }
        if let Ok(mut v) = self.excluded.lock() {
            v.append(&mut self.local_ex);
        }
    }
}

impl Drop for WalkWorker {
    fn drop(&mut self) {
        self.flush();
    }
}

fn poisoned() -> SnapshotError {
    SnapshotError::Io {
        action: "collecting scan results for",
        path: PathBuf::new(),
        source: std::io::Error::other("a scan worker panicked"),
    }
}

fn excluded_for(rel: &[u8], content: Content) -> ExcludedFile {
    ExcludedFile {
        path: crate::names::enc(rel),
        reason: match content {
            Content::TooLarge => ExcludeReason::TooLarge,
            Content::Unreadable => ExcludeReason::Unreadable,
            _ => ExcludeReason::Binary,
        },
    }
}

/// Paths inside `.git/` or our own directory are never captured.
pub(crate) fn is_internal(rel: &str) -> bool {
    rel == ".git"
        || rel.starts_with(".git/")
        || rel == MIA_DIR
        || rel.starts_with(".mia-code/")
        || rel.split('/').any(|c| c == ".git")
}
