//! Which steps are changing a work tree right now, across sessions and
//! processes: an append-only file of "begin"/"end" lines in the work tree's
//! state directory. A step whose paths are unknown (bash) reads it to tell
//! its own changes from those other steps made while it ran, so undoing it
//! never reverts another session's change.
//!
//! Appends are single `write` calls on a file opened with `O_APPEND`, so
//! concurrent writers never interleave within a line. The file is rewritten
//! (keeping only open entries) only while no step with unknown paths runs,
//! so the offsets such steps hold stay valid.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Result, SnapshotError};

/// Rewrite the journal past this size.
const ROTATE_BYTES: u64 = 64 * 1024;
/// An open entry counts as finished after this long whoever wrote it: a
/// known-path step or a restore is open for milliseconds to seconds, so an
/// older one was left by a process that died (and whose pid may have been
/// reused since).
const STALE_MS: i64 = 60 * 60 * 1000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Op {
    Begin,
    End,
}

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub op: Op,
    /// Unique per step (pid + time + counter).
    pub id: String,
    pub pid: u32,
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Project-relative paths the step may change (begin only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    pub t: i64,
}

/// A step of another session (or process) that may have changed files
/// while ours ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Concurrent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub paths: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Journal {
    path: PathBuf,
}

pub(crate) fn host() -> String {
    mia_config::host_name()
}

/// Is `pid` a live process on this machine?
pub(crate) fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
            Ok(()) => true,
            Err(nix::errno::Errno::EPERM) => true,
            Err(_) => false,
        }
    }
    #[cfg(windows)]
    {
        mia_sandbox::process::alive(pid)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = pid;
        true
    }
}

fn new_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}-{}",
        std::process::id(),
        crate::model::now_ms(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

impl Entry {
    fn is_live(&self, me: &str, now: i64) -> bool {
        now - self.t < STALE_MS && (self.host != me || pid_alive(self.pid))
    }
}

impl Journal {
    pub(crate) fn new(state_dir: &Path) -> Self {
        Self {
            path: state_dir.join("journal"),
        }
    }

    fn append(&self, entry: &Entry) -> Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(|e| {
            SnapshotError::io("writing", &self.path)(std::io::Error::other(e.to_string()))
        })?;
        line.push(b'\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(SnapshotError::io("opening", &self.path))?;
        f.write_all(&line)
            .map_err(SnapshotError::io("writing", &self.path))
    }

    /// Announce that a step is about to change `paths`; returns its id.
    pub(crate) fn begin(&self, session: Option<&str>, paths: Vec<String>) -> Result<String> {
        let id = new_id();
        self.append(&Entry {
            op: Op::Begin,
            id: id.clone(),
            pid: std::process::id(),
            host: host(),
            session: session.map(str::to_string),
            paths,
            t: crate::model::now_ms(),
        })?;
        Ok(id)
    }

    /// The step `id` is done changing files.
    pub(crate) fn end(&self, id: &str) -> Result<()> {
        self.append(&Entry {
            op: Op::End,
            id: id.to_string(),
            pid: std::process::id(),
            host: host(),
            session: None,
            paths: Vec::new(),
            t: crate::model::now_ms(),
        })
    }

    pub(crate) fn len(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }

    fn read_from(&self, offset: u64) -> Vec<Entry> {
        let Ok(mut f) = std::fs::File::open(&self.path) else {
            return Vec::new();
        };
        if f.seek(std::io::SeekFrom::Start(offset)).is_err() {
            return Vec::new();
        }
        let mut text = Vec::new();
        if f.read_to_end(&mut text).is_err() {
            return Vec::new();
        }
        text.split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            // A torn last line (a writer killed mid-append) is skipped.
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect()
    }

    /// Steps begun and not ended whose owner is still alive.
    pub(crate) fn open_entries(&self) -> Vec<Entry> {
        let me = host();
        let now = crate::model::now_ms();
        let mut open: BTreeMap<String, Entry> = BTreeMap::new();
        for e in self.read_from(0) {
            match e.op {
                Op::Begin => {
                    open.insert(e.id.clone(), e);
                }
                Op::End => {
                    open.remove(&e.id);
                }
            }
        }
        open.into_values().filter(|e| e.is_live(&me, now)).collect()
    }

    /// Steps that began at or after `offset` (their paths), not ours.
    pub(crate) fn begun_since(&self, offset: u64) -> Vec<Entry> {
        self.read_from(offset)
            .into_iter()
            .filter(|e| e.op == Op::Begin)
            .collect()
    }

    /// Keep only open entries once the file is large. The caller makes sure
    /// no step with unknown paths is running (it would hold an offset).
    pub(crate) fn rotate_if_large(&self) -> Result<()> {
        if self.len() < ROTATE_BYTES {
            return Ok(());
        }
        let mut text = Vec::new();
        for e in self.open_entries() {
            if let Ok(mut l) = serde_json::to_vec(&e) {
                l.push(b'\n');
                text.extend_from_slice(&l);
            }
        }
        crate::repo::atomic_write(&self.path, &text)
    }
}

/// The other steps that may have changed files during ours: `open` were
/// running when ours began, `since` began while ours ran. Our own session's
/// entries are left out (a session runs one step at a time).
pub(crate) fn concurrent(
    open: &[Entry],
    since: &[Entry],
    own_session: Option<&str>,
) -> Vec<Concurrent> {
    let mut by: BTreeMap<Option<String>, BTreeSet<String>> = BTreeMap::new();
    for e in open.iter().chain(since) {
        if own_session.is_some() && e.session.as_deref() == own_session {
            continue;
        }
        by.entry(e.session.clone())
            .or_default()
            .extend(e.paths.iter().cloned());
    }
    by.into_iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(session, paths)| Concurrent {
            session,
            paths: paths.into_iter().collect(),
        })
        .collect()
}

/// Does `path` lie at or under one of `paths` (or contain one)?
pub(crate) fn touches(paths: &[String], path: &str) -> bool {
    paths.iter().any(|p| {
        p.is_empty()
            || p == path
            || path.starts_with(&format!("{p}/"))
            || p.starts_with(&format!("{path}/"))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn open_and_concurrent_entries() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path());
        let a = j.begin(Some("A"), vec!["x.txt".into()]).unwrap();
        let offset = j.len();
        assert_eq!(j.open_entries().len(), 1);
        let b = j.begin(Some("B"), vec!["y/z.txt".into()]).unwrap();
        j.end(&a).unwrap();
        let open = j.open_entries();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].id, b);
        let since = j.begun_since(offset);
        assert_eq!(since.len(), 1);
        let c = concurrent(&[], &since, Some("C"));
        assert_eq!(c[0].paths, vec!["y/z.txt".to_string()]);
        assert!(concurrent(&[], &since, Some("B")).is_empty());
        assert!(touches(&c[0].paths, "y/z.txt"));
        assert!(touches(&["y".to_string()], "y/z.txt"));
        assert!(!touches(&["y".to_string()], "yz.txt"));
    }

    #[test]
    fn entries_of_dead_processes_are_not_open() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path());
        j.append(&Entry {
            op: Op::Begin,
            id: "dead".into(),
            pid: u32::MAX - 1,
            host: host(),
            session: Some("A".into()),
            paths: vec!["a".into()],
            t: crate::model::now_ms(),
        })
        .unwrap();
        assert!(j.open_entries().is_empty());
    }
}
