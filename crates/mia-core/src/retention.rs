//! Snapshot retention (issue 7, reworked for many sessions): each session
//! keeps its last N snapshots plus its baseline. Pruning runs in SQL for the
//! session that grew (no step record is decoded), and only that session's
//! own refs are dropped, so a snapshot another session, a CLI capture or a
//! pre-restore snapshot needs is never made unreachable. `git gc` runs only
//! once the store is past its thresholds, not per turn.

use std::collections::BTreeSet;

use mia_protocol::SessionId;
use mia_store::{SessionDb, SessionPrune, StoreError};

/// What pruning the index of a project did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Index rows removed.
    pub pruned: u64,
    /// Snapshot rows left for the project's sessions.
    pub kept: usize,
    /// Per session: the trees it no longer needs.
    pub sessions: Vec<(SessionId, SessionPrune)>,
}

/// Apply retention to every session of one project (`mia-code snapshot gc`).
pub fn prune_index(
    db: &mut SessionDb,
    project: &str,
    keep_per_session: usize,
) -> Result<Pruned, StoreError> {
    let sessions: BTreeSet<SessionId> = db
        .project_snapshots(project)?
        .into_iter()
        .map(|r| r.snapshot.session_id)
        .collect();
    let mut out = Pruned::default();
    for sid in sessions {
        let p = db.prune_session_snapshots(&sid, keep_per_session)?;
        out.pruned += p.removed;
        if !p.released.is_empty() {
            out.sessions.push((sid, p));
        }
    }
    out.kept = db
        .project_snapshots(project)?
        .iter()
        .filter(|r| !r.snapshot.hash.is_empty())
        .count();
    Ok(out)
}

/// Drop the refs the pruned sessions held; returns how many went.
pub fn release(
    repo: &mia_snapshot::SnapshotRepo,
    pruned: &Pruned,
) -> Result<u64, mia_snapshot::SnapshotError> {
    let mut n = 0;
    for (sid, p) in &pruned.sessions {
        n += repo.release(&sid.to_string(), &p.released, &p.unused)?;
    }
    Ok(n)
}
