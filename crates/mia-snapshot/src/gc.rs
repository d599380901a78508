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
use crate::repo::{REF_PREFIX, SnapshotRepo};

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

impl SnapshotRepo {
    /// Disk used by the hidden repo.
    pub fn size_bytes(&self) -> u64 {
        dir_size(&self.dir)
    }

    /// Drop every snapshot ref not in `live` (when given), internalise
    /// borrowed objects, then `git gc`. Refs and the internalisation run
    /// under the repo lock; `git gc` itself runs without it and only prunes
    /// objects older than an hour, so concurrent captures stay safe.
    pub fn gc(&mut self, live: Option<&HashSet<String>>) -> Result<GcReport> {
        let start = Instant::now();
        let mut report = GcReport {
            bytes_before: self.size_bytes(),
            ..GcReport::default()
        };
        {
            let _lock = self.lock_until(Some(Instant::now() + Duration::from_secs(30)))?;
            let refs: Vec<(String, String)> = self
                .repo
                .references_glob(&format!("{REF_PREFIX}*"))
                .map_err(self.git_err())?
                .flatten()
                .filter_map(|r| Some((r.name()?.to_string(), r.target()?.to_string())))
                .collect();
            for (name, target) in refs {
                if live.is_some_and(|l| !l.contains(&target)) {
                    if let Ok(mut r) = self.repo.find_reference(&name) {
                        r.delete().map_err(self.git_err())?;
                        report.refs_removed += 1;
                    }
                } else {
                    report.refs_kept += 1;
                }
            }
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
                self.git(&["repack", "-a", "-d", "-q"])?;
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
        // Shallow delta chains: trees are read back on every known-path
        // capture, and long chains make each read slow.
        self.git(&["-c", "pack.depth=8", "gc", "-q", "--prune=1.hour.ago"])?;
        report.bytes_after = self.size_bytes();
        report.ms = start.elapsed().as_millis() as u64;
        Ok(report)
    }
}

/// Run [`SnapshotRepo::gc`] on its own thread (the runtime calls this at
/// session end or on a timer).
pub fn gc_in_background(
    project: std::path::PathBuf,
    config: SnapshotConfig,
    live: Option<HashSet<String>>,
) -> std::thread::JoinHandle<Result<GcReport>> {
    std::thread::spawn(move || {
        let mut repo = SnapshotRepo::open(&project, config)?;
        repo.gc(live.as_ref())
    })
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
