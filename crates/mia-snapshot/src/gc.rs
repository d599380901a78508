//! Retention and garbage collection: keep the last N snapshots per session
//! plus every baseline, drop the refs of the rest, copy borrowed objects in,
//! and let `git gc` reclaim space — guarded by free disk space.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cache::StatCache;
use crate::config::SnapshotConfig;
use crate::error::{Result, SnapshotError};
use crate::pack::{PackBuf, store_pack};
use crate::repo::{REF_CLI, REF_LEGACY, SnapshotRepo};

/// One snapshot a session lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetainedSnapshot {
    pub hash: String,
    pub created_at: i64,
    /// The session's start snapshot: never pruned.
    pub baseline: bool,
}

/// Which snapshots to keep and which to prune.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionPlan {
    pub keep: HashSet<String>,
    /// (session id, hash) pairs whose metadata should be deleted.
    pub prune: Vec<(String, String)>,
}

/// Keep the last `keep_per_session` snapshots of every session plus its
/// baselines; a hash any session keeps is kept.
pub fn plan_retention(
    sessions: &BTreeMap<String, Vec<RetainedSnapshot>>,
    keep_per_session: usize,
) -> RetentionPlan {
    let mut plan = RetentionPlan::default();
    let mut candidates = Vec::new();
    for (session, snaps) in sessions {
        let mut ordered: Vec<&RetainedSnapshot> = snaps.iter().collect();
        ordered.sort_by_key(|s| s.created_at);
        let cut = ordered.len().saturating_sub(keep_per_session);
        for (i, s) in ordered.iter().enumerate() {
            if s.baseline || i >= cut {
                plan.keep.insert(s.hash.clone());
            } else {
                candidates.push((session.clone(), s.hash.clone()));
            }
        }
    }
    plan.prune = candidates
        .into_iter()
        .filter(|(_, h)| !plan.keep.contains(h))
        .collect();
    plan
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcReport {
    pub refs_removed: u64,
    pub refs_kept: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// Objects borrowed from the project's git were copied in.
    pub internalized: bool,
    /// Set when git gc did not run (and why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub ms: u64,
}

/// Total size of the files under `dir`.
pub fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(_) => total += e.metadata().map(|m| m.len()).unwrap_or(0),
                Err(_) => {}
            }
        }
    }
    total
}

/// Loose objects past which gc is due (git's own `gc.auto` default).
const GC_LOOSE_OBJECTS: u64 = 6700;
/// Packs past which gc is due.
const GC_PACKS: usize = 20;

impl SnapshotRepo {
    /// Disk used by the store's repository (all work trees' snapshots).
    pub fn size_bytes(&self) -> u64 {
        dir_size(&self.dir)
    }

    fn remove_ref_file(&self, name: &str) -> bool {
        let path = self.dir.join(name);
        let removed = std::fs::remove_file(&path).is_ok();
        if removed && let Some(parent) = path.parent() {
            // An emptied session directory goes too (fails harmlessly otherwise).
            let _ = std::fs::remove_dir(parent);
        }
        removed
    }

    /// Retention pruned `hashes` from `session`'s index: drop the refs that
    /// kept them for it. A migrated (pre-store) ref of a hash goes as well
    /// when `unused` lists it (no index row of any session names it).
    /// Only this session's own refs are touched, so a snapshot another
    /// session, a CLI capture or a pre-restore snapshot needs stays.
    pub fn release(
        &self,
        session: &str,
        hashes: &[String],
        unused: &HashSet<String>,
    ) -> Result<u64> {
        let _lock = self.lock_until(Some(Instant::now() + Duration::from_secs(30)))?;
        let mut n = 0;
        for h in hashes {
            let Ok(oid) = git2::Oid::from_str(h) else {
                continue;
            };
            if self.remove_ref_file(&Self::owner_ref(Some(session), oid)) {
                n += 1;
            }
            if unused.contains(h) && self.remove_ref_file(&format!("{REF_LEGACY}{h}")) {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Drop every ref `session` owns (the session was deleted or expired).
    pub fn release_session(&self, session: &str) -> Result<u64> {
        let _lock = self.lock_until(Some(Instant::now() + Duration::from_secs(30)))?;
        let dir = self
            .dir
            .join(Self::owner_ref(Some(session), git2::Oid::zero()))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut n = 0;
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                if std::fs::remove_file(e.path()).is_ok() {
                    n += 1;
                }
            }
        }
        let _ = std::fs::remove_dir(&dir);
        Ok(n)
    }

    /// Snapshot refs of captures without a session (CLI captures,
    /// pre-restore snapshots) older than `max_age` are dropped (spec 076:
    /// snapshots older than 30 days may be removed).
    pub fn expire_unowned(&self, max_age: Duration) -> Result<u64> {
        let _lock = self.lock_until(Some(Instant::now() + Duration::from_secs(30)))?;
        let dir = self.dir.join(REF_CLI.trim_end_matches('/'));
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return Ok(0);
        };
        let mut n = 0;
        for e in rd.flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > max_age);
            if old && std::fs::remove_file(e.path()).is_ok() {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Forced-undo backups of this work tree: those older than `max_age` go,
    /// and at most `keep` of the newest stay. Returns how many went.
    pub fn expire_backups(&self, max_age: Duration, keep: usize) -> u64 {
        let Ok(rd) = std::fs::read_dir(self.backups_dir()) else {
            return 0;
        };
        let mut dirs: Vec<(std::time::SystemTime, std::path::PathBuf)> = rd
            .flatten()
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
        let mut n = 0;
        for (i, (t, p)) in dirs.into_iter().enumerate() {
            let old = t.elapsed().is_ok_and(|age| age > max_age);
            if (old || i >= keep) && std::fs::remove_dir_all(&p).is_ok() {
                n += 1;
            }
        }
        n
    }

    /// Every snapshot hash some ref keeps (sessions', CLI, migrated).
    pub fn kept_hashes(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        let mut stack = vec![self.dir.join("refs/mia")];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(e.path()),
                    Ok(_) => {
                        if let Ok(text) = std::fs::read_to_string(e.path()) {
                            out.insert(text.trim().to_string());
                        }
                    }
                    Err(_) => {}
                }
            }
        }
        out
    }

    /// Why gc should run now, if it should: too many loose objects (counted
    /// like git's `gc.auto`: one fan-out directory times 256), too many
    /// packs, or borrowed objects to copy in.
    pub fn gc_due(&self) -> Option<String> {
        let objects = self.dir.join("objects");
        let sample = std::fs::read_dir(objects.join("17"))
            .map(|rd| rd.flatten().count() as u64)
            .unwrap_or(0);
        if sample * 256 > GC_LOOSE_OBJECTS {
            return Some(format!("about {} loose objects", sample * 256));
        }
        let packs = std::fs::read_dir(objects.join("pack"))
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
                    .count()
            })
            .unwrap_or(0);
        if packs > GC_PACKS {
            return Some(format!("{packs} packs"));
        }
        if objects.join("info/alternates").exists() {
            return Some("objects borrowed from the project's git".into());
        }
        None
    }

    /// Copy borrowed objects in, then `git gc`: pack loose objects and drop
    /// unreachable ones older than an hour. Copying borrowed objects in runs
    /// under the store's exclusive lock (no capture of any work tree runs
    /// meanwhile); `git gc` itself runs without it, so steps never wait for
    /// it: every snapshot is kept by a ref the moment it is taken, and
    /// objects younger than an hour are never pruned. Refs are never packed
    /// (retention deletes ref files directly).
    pub fn gc(&mut self) -> Result<GcReport> {
        let start = Instant::now();
        let mut report = GcReport {
            bytes_before: self.size_bytes(),
            ..GcReport::default()
        };
        let git = git_program_runs();
        {
            let _lock =
                self.lock_store_exclusive(Some(Instant::now() + Duration::from_secs(30)))?;
            report.refs_kept = self.kept_hashes().len() as u64;
            let free = fs4::available_space(&self.dir).unwrap_or(u64::MAX);
            let needed = self.config.min_free_disk_bytes.max(report.bytes_before);
            if free < needed {
                report.skipped = Some(format!(
                    "only {free} bytes free on the disk holding {}; gc needs {needed}",
                    self.dir.display()
                ));
                report.bytes_after = self.size_bytes();
                report.ms = start.elapsed().as_millis() as u64;
                return Ok(report);
            }
            let alternates = self.dir.join("objects/info/alternates");
            if alternates.exists() {
                if git {
                    self.git(&[
                        "-c",
                        "repack.packKeptObjects=true",
                        "repack",
                        "-a",
                        "-d",
                        "-q",
                    ])?;
                } else {
                    self.copy_borrowed_objects()?;
                }
                std::fs::remove_file(&alternates)
                    .map_err(SnapshotError::io("removing", &alternates))?;
                // libgit2 keeps the alternate open; reopen without it.
                self.repo = git2::Repository::open_bare(&self.dir).map_err(self.git_err())?;
                report.internalized = true;
            }
            // A partial stat cache may name objects no ref keeps.
            let cache = StatCache::load(&self.cache_path());
            if cache.tree.is_none() {
                let _ = std::fs::remove_file(self.cache_path());
                self.cache = None;
            }
        }
        if !git {
            // libgit2 can neither repack nor prune: nothing is lost by
            // waiting, the store only stays larger.
            let copied = if report.internalized {
                "the objects borrowed from the project's git were copied in and "
            } else {
                ""
            };
            report.skipped = Some(format!(
                "no git program found: snapshot gc packs the store with git \
                 (on Windows, install Git for Windows); {copied}every snapshot is kept as it is"
            ));
            report.bytes_after = self.size_bytes();
            report.ms = start.elapsed().as_millis() as u64;
            return Ok(report);
        }
        // Shallow delta chains: trees are read back on every known-path
        // capture, and long chains make each read slow.
        self.git(&[
            "-c",
            "pack.depth=8",
            "-c",
            "gc.packRefs=false",
            "gc",
            "-q",
            "--prune=1.hour.ago",
        ])?;
        report.bytes_after = self.size_bytes();
        report.ms = start.elapsed().as_millis() as u64;
        Ok(report)
    }
}

/// Compressed bytes per pack when borrowed objects are copied in.
const PACK_CHUNK_BYTES: usize = 64 << 20;

impl SnapshotRepo {
    /// Where no git program runs: every object reachable from the store's
    /// refs that lives only in the project's objects (the alternate) is
    /// written into the store's own, in packs indexed by libgit2, so the
    /// alternate can go. Runs under the store's exclusive lock.
    fn copy_borrowed_objects(&self) -> Result<u64> {
        let err = self.git_err();
        // libgit2 reads a directory's own alternates along with it, so "is
        // it only borrowed" is asked the other way: does a borrowed
        // directory have it (an object in both is copied; that is harmless).
        let list = self.dir.join("objects/info/alternates");
        let text = std::fs::read_to_string(&list).map_err(SnapshotError::io("reading", &list))?;
        let borrowed = git2::Odb::new().map_err(&err)?;
        for dir in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let dir = if Path::new(dir).is_absolute() {
                Path::new(dir).to_path_buf()
            } else {
                self.dir.join("objects").join(dir)
            };
            if dir.is_dir() {
                borrowed
                    .add_disk_alternate(&dir.to_string_lossy())
                    .map_err(&err)?;
            }
        }
        let odb = self.repo.odb().map_err(&err)?;
        let mut stack: Vec<git2::Oid> = Vec::new();
        for r in self.repo.references().map_err(&err)? {
            if let Some(t) = r.map_err(&err)?.target() {
                stack.push(t);
            }
        }
        let mut seen = HashSet::new();
        let mut copied = 0;
        let mut pack = PackBuf::default();
        while let Some(oid) = stack.pop() {
            if !seen.insert(oid) {
                continue;
            }
            let obj = odb.read(oid).map_err(&err)?;
            match obj.kind() {
                git2::ObjectType::Tree => {
                    let tree = self.repo.find_tree(oid).map_err(&err)?;
                    stack.extend(
                        tree.iter()
                            .filter(|e| e.kind() != Some(git2::ObjectType::Commit))
                            .map(|e| e.id()),
                    );
                }
                git2::ObjectType::Commit => {
                    let c = self.repo.find_commit(oid).map_err(&err)?;
                    stack.push(c.tree_id());
                    stack.extend(c.parent_ids());
                }
                _ => {}
            }
            if borrowed.exists(oid) {
                pack.add(obj.kind(), obj.data()).map_err(&err)?;
                copied += 1;
                if pack.len() > PACK_CHUNK_BYTES {
                    store_pack(&odb, &pack.take_pack()).map_err(&err)?;
                }
            }
        }
        if !pack.is_empty() {
            store_pack(&odb, &pack.take_pack()).map_err(&err)?;
        }
        Ok(copied)
    }
}

/// Run [`SnapshotRepo::gc`] on its own thread when it is due (the runtime
/// calls this after retention).
pub fn gc_in_background(
    project: std::path::PathBuf,
    config: SnapshotConfig,
) -> std::thread::JoinHandle<Result<Option<GcReport>>> {
    std::thread::spawn(move || {
        let mut repo = SnapshotRepo::open(&project, config)?;
        match repo.gc_due() {
            Some(why) => {
                tracing::info!(project = %project.display(), %why, "snapshot gc");
                repo.gc().map(Some)
            }
            None => Ok(None),
        }
    })
}

/// Whether `git --version` runs (gc needs the program; capture and undo do not).
fn git_program_runs() -> bool {
    std::process::Command::new("git")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_last_n_and_baselines_across_sessions() {
        let mk = |h: &str, t: i64, b: bool| RetainedSnapshot {
            hash: h.into(),
            created_at: t,
            baseline: b,
        };
        let mut s = BTreeMap::new();
        s.insert(
            "a".to_string(),
            vec![
                mk("base", 0, true),
                mk("h1", 1, false),
                mk("h2", 2, false),
                mk("h3", 3, false),
            ],
        );
        s.insert("b".to_string(), vec![mk("h1", 5, false)]);
        let plan = plan_retention(&s, 2);
        assert!(plan.keep.contains("base") && plan.keep.contains("h2") && plan.keep.contains("h3"));
        // h1 is old for session a but recent for session b: kept.
        assert!(plan.keep.contains("h1"));
        assert!(plan.prune.is_empty());
        let plan = plan_retention(&s, 1);
        assert!(!plan.keep.contains("h2"));
        assert_eq!(plan.prune, vec![("a".to_string(), "h2".to_string())]);
    }
}
