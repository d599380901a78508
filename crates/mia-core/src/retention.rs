//! Snapshot retention (issue 7): keep the last N snapshots of every session
//! plus each session's baseline, drop the rest from the index, and tell the
//! snapshot repo's gc which trees are still live.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use mia_protocol::SessionId;
use mia_store::{SessionDb, SnapshotKind, StoreError};

/// What pruning the index did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    pub pruned: u64,
    pub kept: usize,
    /// Trees gc must keep: the kept snapshots and the "after" trees of the
    /// steps they start (undo's conflict check and redo need them).
    pub live: HashSet<String>,
}

/// Apply retention to the index of one project (every session in it).
pub fn prune_index(
    db: &mut SessionDb,
    project: &str,
    keep_per_session: usize,
) -> Result<Pruned, StoreError> {
    let rows = db.project_snapshots(project)?;
    let mut per_session: BTreeMap<String, Vec<mia_snapshot::RetainedSnapshot>> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.snapshot.hash.is_empty()) {
        per_session
            .entry(r.snapshot.session_id.to_string())
            .or_default()
            .push(mia_snapshot::RetainedSnapshot {
                hash: r.snapshot.hash.clone(),
                created_at: r.created_at,
                baseline: r.snapshot.kind == SnapshotKind::Baseline,
            });
    }
    let plan = mia_snapshot::plan_retention(&per_session, keep_per_session);
    let mut pruned = 0u64;
    for (session, hash) in &plan.prune {
        let sid: SessionId = session
            .parse()
            .map_err(|e: mia_protocol::IdParseError| StoreError::InvalidInput(e.to_string()))?;
        pruned += db.delete_snapshots(&sid, std::slice::from_ref(hash))?;
    }
    let mut live = plan.keep.clone();
    let sessions: BTreeSet<SessionId> = rows.iter().map(|r| r.snapshot.session_id).collect();
    for sid in sessions {
        for step in db.snapshot_steps(&sid)? {
            if live.contains(&step.step.before_hash) {
                live.insert(step.step.after_hash.clone());
            }
        }
    }
    Ok(Pruned {
        pruned,
        kept: plan.keep.len(),
        live,
    })
}
