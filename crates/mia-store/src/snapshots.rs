//! The snapshot index (issue 7): what each session's snapshots are and the
//! per-step records undo/revert work from. The trees live in the project's
//! hidden repo (`mia-snapshot`); this module only stores metadata, as plain
//! rows plus JSON for the parts `mia-snapshot` owns the shape of.

use mia_protocol::{SessionId, now_ms};
use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::db::SessionDb;
use crate::error::{Result, StoreError};

/// Why a snapshot was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotKind {
    /// The session's start state: never pruned by retention.
    Baseline,
    /// Before a file-modifying tool call.
    Step,
    /// Before an undo/revert/redo.
    Revert,
}

impl SnapshotKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Baseline => "baseline",
            Self::Step => "step",
            Self::Revert => "revert",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Baseline, Self::Step, Self::Revert]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// A snapshot to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewSnapshot {
    pub session_id: SessionId,
    /// Tree hash; empty when `unavailable` is set.
    pub hash: String,
    pub message_id: Option<String>,
    pub tool_call_id: Option<String>,
    pub kind: SnapshotKind,
    pub files: u64,
    /// `[{"path": ..., "reason": ...}]` as mia-snapshot lists them.
    pub excluded: serde_json::Value,
    pub excluded_total: u64,
    pub mode: String,
    pub ms: u64,
    pub unavailable: Option<String>,
}

/// What [`SessionDb::prune_session_snapshots`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionPrune {
    /// Index rows removed.
    pub removed: u64,
    /// Trees the session no longer needs (drop its refs to them).
    pub released: Vec<String>,
    /// Of those, the ones no row of any session names.
    pub unused: std::collections::HashSet<String>,
}

/// A stored snapshot row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotRow {
    pub seq: i64,
    pub created_at: i64,
    #[serde(flatten)]
    pub snapshot: NewSnapshot,
}

/// A step record to store (`record` is mia-snapshot's `StepRecord` JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewStep {
    pub id: String,
    pub session_id: SessionId,
    pub message_id: String,
    pub tool_call_id: Option<String>,
    /// `tool`, `revert` or `redo`.
    pub kind: String,
    pub before_hash: String,
    pub after_hash: String,
    pub record: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRow {
    pub seq: i64,
    pub created_at: i64,
    #[serde(flatten)]
    pub step: NewStep,
}

const SNAPSHOT_COLUMNS: &str = "seq, session_id, hash, message_id, tool_call_id, kind, files, excluded, excluded_total, mode, ms, unavailable, created_at";
const STEP_COLUMNS: &str = "seq, id, session_id, message_id, tool_call_id, kind, before_hash, after_hash, record, created_at";

fn decode<T>(what: &'static str) -> impl Fn(T) -> StoreError
where
    T: std::fmt::Display,
{
    move |e| StoreError::Decode {
        what,
        detail: e.to_string(),
    }
}

fn u64_of(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

type RawSnapshot = (
    i64,
    String,
    String,
    Option<String>,
    Option<String>,
    String,
    i64,
    String,
    i64,
    String,
    i64,
    Option<String>,
    i64,
);

fn raw_snapshot(r: &Row<'_>) -> rusqlite::Result<RawSnapshot> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
        r.get(11)?,
        r.get(12)?,
    ))
}

fn snapshot_from_raw(raw: RawSnapshot) -> Result<SnapshotRow> {
    let (
        seq,
        session,
        hash,
        message_id,
        tool_call_id,
        kind,
        files,
        excluded,
        total,
        mode,
        ms,
        unavailable,
        created_at,
    ) = raw;
    Ok(SnapshotRow {
        seq,
        created_at,
        snapshot: NewSnapshot {
            session_id: session.parse().map_err(decode("snapshot session id"))?,
            hash,
            message_id,
            tool_call_id,
            kind: SnapshotKind::parse(&kind).ok_or_else(|| StoreError::Decode {
                what: "snapshot kind",
                detail: kind.clone(),
            })?,
            files: u64_of(files),
            excluded: serde_json::from_str(&excluded).map_err(decode("snapshot exclusions"))?,
            excluded_total: u64_of(total),
            mode,
            ms: u64_of(ms),
            unavailable,
        },
    })
}

type RawStep = (
    i64,
    String,
    String,
    String,
    Option<String>,
    String,
    String,
    String,
    String,
    i64,
);

fn raw_step(r: &Row<'_>) -> rusqlite::Result<RawStep> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
    ))
}

fn step_from_raw(raw: RawStep) -> Result<StepRow> {
    let (
        seq,
        id,
        session,
        message_id,
        tool_call_id,
        kind,
        before_hash,
        after_hash,
        record,
        created_at,
    ) = raw;
    Ok(StepRow {
        seq,
        created_at,
        step: NewStep {
            id,
            session_id: session.parse().map_err(decode("step session id"))?,
            message_id,
            tool_call_id,
            kind,
            before_hash,
            after_hash,
            record: serde_json::from_str(&record).map_err(decode("step record"))?,
        },
    })
}

/// Of `hashes` (trees `session` no longer needs), those no snapshot row
/// and no other session's step names any more.
fn unused_trees(
    tx: &crate::db::Tx<'_>,
    session: &str,
    hashes: &[String],
) -> Result<std::collections::HashSet<String>> {
    let mut st = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM snapshots WHERE hash = ?1) OR EXISTS (SELECT 1 FROM snapshot_steps WHERE session_id <> ?2 AND (before_hash = ?1 OR after_hash = ?1))",
        )
        .map_err(|e| tx.err(e))?;
    let mut unused = std::collections::HashSet::new();
    for h in hashes {
        let used: bool = st
            .query_row(params![h, session], |r| r.get(0))
            .map_err(|e| tx.err(e))?;
        if !used {
            unused.insert(h.clone());
        }
    }
    Ok(unused)
}

impl SessionDb {
    /// Record a snapshot a session took. Returns its sequence number.
    pub fn add_snapshot(&mut self, s: &NewSnapshot) -> Result<i64> {
        let excluded = serde_json::to_string(&s.excluded)
            .map_err(|e| StoreError::InvalidInput(format!("snapshot exclusions: {e}")))?;
        let session = s.session_id.to_string();
        self.write(|tx| {
            let exists: Option<i64> = tx
                .query_row("SELECT 1 FROM sessions WHERE id = ?1", [&session], |r| r.get(0))
                .optional()
                .map_err(|e| tx.err(e))?;
            if exists.is_none() {
                return Err(StoreError::SessionNotFound(session.clone()));
            }
            tx.prepare_cached(
                "INSERT INTO snapshots (session_id, hash, message_id, tool_call_id, kind, files, excluded, excluded_total, mode, ms, unavailable, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    session,
                    s.hash,
                    s.message_id,
                    s.tool_call_id,
                    s.kind.as_str(),
                    i64_of(s.files),
                    excluded,
                    i64_of(s.excluded_total),
                    s.mode,
                    i64_of(s.ms),
                    s.unavailable,
                    now_ms()
                ])
            })
            .map_err(|e| tx.err(e))?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// A session's snapshots, oldest first.
    pub fn snapshots(&self, session_id: &SessionId) -> Result<Vec<SnapshotRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SNAPSHOT_COLUMNS} FROM snapshots WHERE session_id = ?1 ORDER BY seq"
            ))
            .map_err(|e| self.err(e))?;
        let raws = stmt
            .query_map([session_id.to_string()], raw_snapshot)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        raws.into_iter().map(snapshot_from_raw).collect()
    }

    /// Every snapshot of every session whose directory is `directory` (one
    /// hidden repo): what retention and gc decide over.
    pub fn project_snapshots(&self, directory: &str) -> Result<Vec<SnapshotRow>> {
        let cols = SNAPSHOT_COLUMNS
            .split(", ")
            .map(|c| format!("n.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {cols} FROM snapshots n JOIN sessions s ON s.id = n.session_id WHERE s.directory = ?1 ORDER BY n.seq"
            ))
            .map_err(|e| self.err(e))?;
        let raws = stmt
            .query_map([directory], raw_snapshot)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        raws.into_iter().map(snapshot_from_raw).collect()
    }

    /// Retention for one session, in SQL (no step record is decoded): keep
    /// its last `keep` snapshots plus its baselines, forget the rest, and
    /// say which trees the session no longer needs. Cheap when there is
    /// nothing to prune (one count).
    pub fn prune_session_snapshots(
        &mut self,
        session_id: &SessionId,
        keep: usize,
    ) -> Result<SessionPrune> {
        let session = session_id.to_string();
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        self.write(|tx| {
            let count: i64 = tx
                .query_row(
                    "SELECT COUNT(*) FROM snapshots WHERE session_id = ?1 AND kind <> 'baseline' AND hash <> ''",
                    [&session],
                    |r| r.get(0),
                )
                .map_err(|e| tx.err(e))?;
            if count <= keep {
                return Ok(SessionPrune::default());
            }
            let cut: i64 = tx
                .query_row(
                    "SELECT seq FROM snapshots WHERE session_id = ?1 AND kind <> 'baseline' AND hash <> '' ORDER BY seq DESC LIMIT 1 OFFSET ?2",
                    params![session, keep],
                    |r| r.get(0),
                )
                .map_err(|e| tx.err(e))?;
            // Queries take the session as ?1 and the cut as ?2 (every one
            // names both).
            let collect = |sql: &str| -> Result<Vec<String>> {
                let mut st = tx.prepare_cached(sql).map_err(|e| tx.err(e))?;
                let rows = st
                    .query_map(params![session, cut], |r| r.get::<_, String>(0))
                    .map_err(|e| tx.err(e))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(|e| tx.err(e))
            };
            // What the pruned rows and the steps they begin name...
            let mut candidates: std::collections::BTreeSet<String> = collect(
                "SELECT hash FROM snapshots WHERE session_id = ?1 AND kind <> 'baseline' AND hash <> '' AND seq <= ?2",
            )?
            .into_iter()
            .collect();
            let pruned_after = collect(
                "SELECT st.after_hash FROM snapshot_steps st WHERE st.session_id = ?1 AND st.before_hash IN (SELECT hash FROM snapshots WHERE session_id = ?1 AND kind <> 'baseline' AND seq <= ?2)",
            )?;
            candidates.extend(pruned_after);
            let removed = tx
                .execute(
                    "DELETE FROM snapshots WHERE session_id = ?1 AND kind <> 'baseline' AND hash <> '' AND seq <= ?2",
                    params![session, cut],
                )
                .map_err(|e| tx.err(e))? as u64;
            // ...minus what the session still needs: its remaining rows and
            // the "after" trees of the steps they begin.
            let live: std::collections::HashSet<String> = collect(
                "SELECT hash FROM snapshots WHERE session_id = ?1 AND (kind = 'baseline' OR seq > ?2) UNION SELECT st.after_hash FROM snapshot_steps st JOIN snapshots n ON n.session_id = st.session_id AND n.hash = st.before_hash WHERE st.session_id = ?1",
            )?
            .into_iter()
            .collect();
            let released: Vec<String> = candidates
                .into_iter()
                .filter(|h| !live.contains(h) && !h.is_empty())
                .collect();
            let unused = unused_trees(tx, &session, &released)?;
            Ok(SessionPrune {
                removed,
                released,
                unused,
            })
        })
    }

    /// Spec 076's expiry: the snapshots of this project's sessions not
    /// updated since `before_ms` are forgotten, baselines included (their
    /// step records stay, as history). Returns, per session, the trees it
    /// no longer needs.
    pub fn expire_snapshots(
        &mut self,
        directory: &str,
        before_ms: i64,
    ) -> Result<Vec<(SessionId, SessionPrune)>> {
        let directory = directory.to_string();
        self.write(|tx| {
            let sessions: Vec<String> = {
                let mut st = tx
                    .prepare(
                        "SELECT s.id FROM sessions s WHERE s.directory = ?1 AND s.updated_at < ?2 AND EXISTS (SELECT 1 FROM snapshots n WHERE n.session_id = s.id AND n.hash <> '')",
                    )
                    .map_err(|e| tx.err(e))?;
                let rows = st
                    .query_map(params![directory, before_ms], |r| r.get::<_, String>(0))
                    .map_err(|e| tx.err(e))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(|e| tx.err(e))?
            };
            let mut out = Vec::new();
            for sid in sessions {
                let hashes: Vec<String> = {
                    let mut st = tx
                        .prepare(
                            "SELECT hash FROM snapshots WHERE session_id = ?1 AND hash <> '' UNION SELECT before_hash FROM snapshot_steps WHERE session_id = ?1 UNION SELECT after_hash FROM snapshot_steps WHERE session_id = ?1",
                        )
                        .map_err(|e| tx.err(e))?;
                    let rows = st
                        .query_map([&sid], |r| r.get::<_, String>(0))
                        .map_err(|e| tx.err(e))?;
                    rows.collect::<rusqlite::Result<Vec<_>>>()
                        .map_err(|e| tx.err(e))?
                };
                let removed = tx
                    .execute("DELETE FROM snapshots WHERE session_id = ?1", [&sid])
                    .map_err(|e| tx.err(e))? as u64;
                let unused = unused_trees(tx, &sid, &hashes)?;
                let id: SessionId = sid.parse().map_err(|e: mia_protocol::IdParseError| {
                    StoreError::InvalidInput(e.to_string())
                })?;
                out.push((
                    id,
                    SessionPrune {
                        removed,
                        released: hashes.into_iter().filter(|h| !h.is_empty()).collect(),
                        unused,
                    },
                ));
            }
            Ok(out)
        })
    }

    /// Forget some of a session's snapshots (retention). Baselines are
    /// never deleted. Returns how many rows went.
    pub fn delete_snapshots(&mut self, session_id: &SessionId, hashes: &[String]) -> Result<u64> {
        let session = session_id.to_string();
        self.write(|tx| {
            let mut n = 0u64;
            let mut stmt = tx
                .prepare_cached(
                    "DELETE FROM snapshots WHERE session_id = ?1 AND hash = ?2 AND kind <> 'baseline'",
                )
                .map_err(|e| tx.err(e))?;
            for h in hashes {
                n += stmt.execute(params![session, h]).map_err(|e| tx.err(e))? as u64;
            }
            Ok(n)
        })
    }

    /// Record a step (tool call, undo/revert, redo).
    pub fn add_snapshot_step(&mut self, s: &NewStep) -> Result<i64> {
        let record = serde_json::to_string(&s.record)
            .map_err(|e| StoreError::InvalidInput(format!("step record: {e}")))?;
        let session = s.session_id.to_string();
        self.write(|tx| {
            let exists: Option<i64> = tx
                .query_row("SELECT 1 FROM sessions WHERE id = ?1", [&session], |r| r.get(0))
                .optional()
                .map_err(|e| tx.err(e))?;
            if exists.is_none() {
                return Err(StoreError::SessionNotFound(session.clone()));
            }
            tx.prepare_cached(
                "INSERT INTO snapshot_steps (id, session_id, message_id, tool_call_id, kind, before_hash, after_hash, record, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    s.id,
                    session,
                    s.message_id,
                    s.tool_call_id,
                    s.kind,
                    s.before_hash,
                    s.after_hash,
                    record,
                    now_ms()
                ])
            })
            .map_err(|e| tx.err(e))?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// A session's steps in the order they happened.
    pub fn snapshot_steps(&self, session_id: &SessionId) -> Result<Vec<StepRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {STEP_COLUMNS} FROM snapshot_steps WHERE session_id = ?1 ORDER BY seq"
            ))
            .map_err(|e| self.err(e))?;
        let raws = stmt
            .query_map([session_id.to_string()], raw_step)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        raws.into_iter().map(step_from_raw).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;

    fn db() -> (tempfile::TempDir, SessionDb) {
        let dir = tempfile::tempdir().unwrap();
        let db = SessionDb::open(dir.path().join("data.db")).unwrap();
        (dir, db)
    }

    fn snap(session: SessionId, hash: &str, kind: SnapshotKind) -> NewSnapshot {
        NewSnapshot {
            session_id: session,
            hash: hash.into(),
            message_id: Some("m1".into()),
            tool_call_id: None,
            kind,
            files: 3,
            excluded: serde_json::json!([{"path": "a.png", "reason": "binary"}]),
            excluded_total: 1,
            mode: "paths".into(),
            ms: 4,
            unavailable: None,
        }
    }

    #[test]
    fn snapshots_and_steps_round_trip_in_order() {
        let (_d, mut db) = db();
        let s = db
            .create_session(NewSession {
                directory: "/proj".into(),
                ..Default::default()
            })
            .unwrap();
        db.add_snapshot(&snap(s.id, "base", SnapshotKind::Baseline))
            .unwrap();
        db.add_snapshot(&snap(s.id, "h1", SnapshotKind::Step))
            .unwrap();
        db.add_snapshot(&snap(s.id, "h2", SnapshotKind::Step))
            .unwrap();
        let rows = db.snapshots(&s.id).unwrap();
        let hashes: Vec<&str> = rows.iter().map(|r| r.snapshot.hash.as_str()).collect();
        assert_eq!(hashes, ["base", "h1", "h2"]);
        assert_eq!(rows[0].snapshot.excluded[0]["reason"], "binary");
        assert_eq!(db.project_snapshots("/proj").unwrap().len(), 3);
        assert!(db.project_snapshots("/other").unwrap().is_empty());
        // Baselines survive retention deletes.
        let n = db
            .delete_snapshots(&s.id, &["base".to_string(), "h1".to_string()])
            .unwrap();
        assert_eq!(n, 1);
        let left: Vec<String> = db
            .snapshots(&s.id)
            .unwrap()
            .into_iter()
            .map(|r| r.snapshot.hash)
            .collect();
        assert_eq!(left, ["base", "h2"]);

        let step = NewStep {
            id: "call-1".into(),
            session_id: s.id,
            message_id: "m1".into(),
            tool_call_id: Some("call-1".into()),
            kind: "tool".into(),
            before_hash: "h1".into(),
            after_hash: "h2".into(),
            record: serde_json::json!({"id": "call-1", "changes": [{"path": "a", "kind": "added"}]}),
        };
        db.add_snapshot_step(&step).unwrap();
        // The same step id twice in a session is refused.
        assert!(db.add_snapshot_step(&step).is_err());
        let steps = db.snapshot_steps(&s.id).unwrap();
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].step, step);
    }

    #[test]
    fn unknown_session_is_a_clear_error() {
        let (_d, mut db) = db();
        let err = db
            .add_snapshot(&snap(SessionId::new(), "h", SnapshotKind::Step))
            .unwrap_err();
        assert!(matches!(err, StoreError::SessionNotFound(_)), "{err}");
    }

    fn step(session: SessionId, id: &str, before: &str, after: &str) -> NewStep {
        NewStep {
            id: id.into(),
            session_id: session,
            message_id: "m".into(),
            tool_call_id: Some(id.into()),
            kind: "tool".into(),
            before_hash: before.into(),
            after_hash: after.into(),
            record: serde_json::json!({"id": id}),
        }
    }

    #[test]
    fn session_retention_keeps_the_last_n_and_says_which_trees_went() {
        let (_d, mut db) = db();
        let new = |db: &mut SessionDb| {
            db.create_session(NewSession {
                directory: "/proj".into(),
                ..Default::default()
            })
            .unwrap()
            .id
        };
        let (a, b) = (new(&mut db), new(&mut db));
        db.add_snapshot(&snap(a, "base", SnapshotKind::Baseline))
            .unwrap();
        for (i, h) in ["h1", "h2", "h3", "h4"].iter().enumerate() {
            db.add_snapshot(&snap(a, h, SnapshotKind::Step)).unwrap();
            let after = format!("a{}", i + 1);
            db.add_snapshot_step(&step(a, &format!("c{i}"), h, &after))
                .unwrap();
        }
        // Session b shares a tree with a's oldest step.
        db.add_snapshot(&snap(b, "h1", SnapshotKind::Step)).unwrap();
        // Nothing to do under the limit: one count, no change.
        assert_eq!(
            db.prune_session_snapshots(&a, 10).unwrap(),
            SessionPrune::default()
        );
        let p = db.prune_session_snapshots(&a, 2).unwrap();
        assert_eq!(p.removed, 2);
        let mut released = p.released.clone();
        released.sort();
        // h1/h2 and the "after" trees of the steps they begin.
        assert_eq!(released, ["a1", "a2", "h1", "h2"]);
        // h1 is still named by session b's row: its migrated ref stays.
        assert!(!p.unused.contains("h1"));
        assert!(p.unused.contains("h2"));
        let left: Vec<String> = db
            .snapshots(&a)
            .unwrap()
            .into_iter()
            .map(|r| r.snapshot.hash)
            .collect();
        assert_eq!(left, ["base", "h3", "h4"]);
    }

    #[test]
    fn expiry_forgets_idle_sessions_snapshots_baselines_included() {
        let (_d, mut db) = db();
        let s = db
            .create_session(NewSession {
                directory: "/proj".into(),
                ..Default::default()
            })
            .unwrap();
        db.add_snapshot(&snap(s.id, "base", SnapshotKind::Baseline))
            .unwrap();
        db.add_snapshot(&snap(s.id, "h1", SnapshotKind::Step))
            .unwrap();
        db.add_snapshot_step(&step(s.id, "c1", "h1", "a1")).unwrap();
        // Not idle long enough: nothing.
        assert!(db.expire_snapshots("/proj", 0).unwrap().is_empty());
        let out = db.expire_snapshots("/proj", now_ms() + 60_000).unwrap();
        assert_eq!(out.len(), 1);
        let mut released = out[0].1.released.clone();
        released.sort();
        assert_eq!(released, ["a1", "base", "h1"]);
        assert!(db.snapshots(&s.id).unwrap().is_empty());
        // The step records stay as history.
        assert_eq!(db.snapshot_steps(&s.id).unwrap().len(), 1);
        assert!(
            db.expire_snapshots("/other", now_ms() + 60_000)
                .unwrap()
                .is_empty()
        );
    }
}
