//! Session leases (issue 11): a session is driven by one owner at a time —
//! a turn, an undo/revert/redo, a delete — across processes. A claim is one
//! IMMEDIATE transaction; the holder refreshes `heartbeat_at`; a claim whose
//! owner died (same host, pid gone) or whose heartbeat stopped is taken over.

use mia_protocol::{SessionId, now_ms};
use rusqlite::{OptionalExtension, params};

use crate::db::SessionDb;
use crate::error::{Result, StoreError};

/// A claim without a heartbeat for this long is dead, whoever held it.
pub const LEASE_STALE_MS: i64 = 15_000;

/// Who claims a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseOwner {
    /// The program, e.g. `mia-code` or `mia-code-desktop`.
    pub name: String,
    pub pid: u32,
    pub host: String,
}

/// A held claim on a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub session_id: SessionId,
    /// What it is for: `turn`, `undo`, `revert`, `redo`, `delete`, ...
    pub kind: String,
    pub owner: LeaseOwner,
    /// Unique per claim: only its holder can refresh or release it.
    pub token: String,
    pub acquired_at: i64,
    pub heartbeat_at: i64,
}

impl std::fmt::Display for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} in {}, pid {}",
            match self.kind.as_str() {
                "turn" => "a turn",
                "delete" => "a delete",
                "compaction" => "a compaction",
                other => other,
            },
            self.owner.name,
            self.owner.pid
        )?;
        if self.owner.host != crate::leases::this_host() {
            write!(f, " on {}", self.owner.host)?;
        }
        Ok(())
    }
}

/// This machine's name, as leases record it.
pub fn this_host() -> String {
    mia_config::host_name()
}

fn lease_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Lease)> {
    let sid: String = row.get(0)?;
    let session_id = sid.parse().map_err(|e: mia_protocol::IdParseError| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            e.to_string().into(),
        )
    })?;
    Ok((
        sid,
        Lease {
            session_id,
            kind: row.get(1)?,
            owner: LeaseOwner {
                name: row.get(2)?,
                pid: u32::try_from(row.get::<_, i64>(3)?).unwrap_or(0),
                host: row.get(4)?,
            },
            token: row.get(5)?,
            acquired_at: row.get(6)?,
            heartbeat_at: row.get(7)?,
        },
    ))
}

const LEASE_COLUMNS: &str = "session_id, kind, owner, pid, host, token, acquired_at, heartbeat_at";

/// Is this claim still held? `alive(host, pid)` says whether a process
/// is running (it can only know for this host).
fn is_live(l: &Lease, now: i64, alive: &dyn Fn(&str, u32) -> bool) -> bool {
    now - l.heartbeat_at < LEASE_STALE_MS && alive(&l.owner.host, l.owner.pid)
}

impl SessionDb {
    /// Claim `session` for `kind`. Fails with [`StoreError::SessionBusy`]
    /// naming the holder while another live claim exists; a dead one (its
    /// process gone, or no heartbeat for [`LEASE_STALE_MS`]) is taken over,
    /// and a session it left "busy" goes back to idle.
    pub fn claim_session(
        &mut self,
        session_id: &SessionId,
        kind: &str,
        owner: &LeaseOwner,
        alive: &dyn Fn(&str, u32) -> bool,
    ) -> Result<Lease> {
        let sid = session_id.to_string();
        let now = now_ms();
        let token = format!("{}-{}-{}", owner.pid, now, mia_protocol::PartId::new());
        self.write(|tx| {
            let exists: Option<i64> = tx
                .query_row("SELECT 1 FROM sessions WHERE id = ?1", [&sid], |r| r.get(0))
                .optional()
                .map_err(|e| tx.err(e))?;
            if exists.is_none() {
                return Err(StoreError::SessionNotFound(sid.clone()));
            }
            let held = tx
                .query_row(
                    &format!("SELECT {LEASE_COLUMNS} FROM session_leases WHERE session_id = ?1"),
                    [&sid],
                    lease_from_row,
                )
                .optional()
                .map_err(|e| tx.err(e))?;
            if let Some((_, l)) = held {
                if is_live(&l, now, alive) {
                    return Err(StoreError::SessionBusy {
                        session: sid.clone(),
                        holder: l.to_string(),
                    });
                }
                tracing::info!(session = %sid, holder = %l, "taking over a dead session claim");
                tx.execute(
                    "UPDATE sessions SET status = 'idle' WHERE id = ?1 AND status <> 'idle'",
                    [&sid],
                )
                .map_err(|e| tx.err(e))?;
            }
            tx.execute(
                "INSERT INTO session_leases (session_id, kind, owner, pid, host, token, acquired_at, heartbeat_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) ON CONFLICT(session_id) DO UPDATE SET kind = excluded.kind, owner = excluded.owner, pid = excluded.pid, host = excluded.host, token = excluded.token, acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at",
                params![sid, kind, owner.name, i64::from(owner.pid), owner.host, token, now],
            )
            .map_err(|e| tx.err(e))?;
            Ok(Lease {
                session_id: *session_id,
                kind: kind.to_string(),
                owner: owner.clone(),
                token: token.clone(),
                acquired_at: now,
                heartbeat_at: now,
            })
        })
    }

    /// Refresh a held claim. False when it is no longer ours (taken over
    /// after our heartbeat stopped, or released).
    pub fn heartbeat(&mut self, session_id: &SessionId, token: &str) -> Result<bool> {
        let sid = session_id.to_string();
        let now = now_ms();
        self.write(|tx| {
            let n = tx
                .execute(
                    "UPDATE session_leases SET heartbeat_at = ?3 WHERE session_id = ?1 AND token = ?2",
                    params![sid, token, now],
                )
                .map_err(|e| tx.err(e))?;
            Ok(n > 0)
        })
    }

    /// Give a claim back (a no-op when it is no longer ours).
    pub fn release_claim(&mut self, session_id: &SessionId, token: &str) -> Result<()> {
        let sid = session_id.to_string();
        self.write(|tx| {
            tx.execute(
                "DELETE FROM session_leases WHERE session_id = ?1 AND token = ?2",
                params![sid, token],
            )
            .map_err(|e| tx.err(e))?;
            Ok(())
        })
    }

    /// Who holds `session` right now, if a live claim exists.
    pub fn session_claim(
        &self,
        session_id: &SessionId,
        alive: &dyn Fn(&str, u32) -> bool,
    ) -> Result<Option<Lease>> {
        let now = now_ms();
        let held = self
            .conn
            .query_row(
                &format!("SELECT {LEASE_COLUMNS} FROM session_leases WHERE session_id = ?1"),
                [session_id.to_string()],
                lease_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(held.map(|(_, l)| l).filter(|l| is_live(l, now, alive)))
    }

    /// Drop the claims of processes that are gone (this host) or silent,
    /// and put the sessions they left busy back to idle. Returns how many.
    pub fn recover_dead_claims(&mut self, alive: &dyn Fn(&str, u32) -> bool) -> Result<u64> {
        let now = now_ms();
        self.write(|tx| {
            let held = {
                let mut st = tx
                    .prepare(&format!("SELECT {LEASE_COLUMNS} FROM session_leases"))
                    .map_err(|e| tx.err(e))?;
                let rows = st.query_map([], lease_from_row).map_err(|e| tx.err(e))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(|e| tx.err(e))?
            };
            let mut n = 0;
            for (sid, l) in held {
                if is_live(&l, now, alive) {
                    continue;
                }
                tx.execute(
                    "DELETE FROM session_leases WHERE session_id = ?1 AND token = ?2",
                    params![sid, l.token],
                )
                .map_err(|e| tx.err(e))?;
                tx.execute(
                    "UPDATE sessions SET status = 'idle' WHERE id = ?1 AND status <> 'idle'",
                    [&sid],
                )
                .map_err(|e| tx.err(e))?;
                n += 1;
            }
            Ok(n)
        })
    }
}
