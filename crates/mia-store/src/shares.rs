//! Shares this machine created (migration 0009): what "My shares" lists
//! and `/unshare` needs besides the secret (kept outside the database).

use mia_protocol::ShareRecord;
use rusqlite::{OptionalExtension, params};

use crate::db::SessionDb;
use crate::error::Result;

/// A share as stored, with where its secret is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredShare {
    pub record: ShareRecord,
    /// The key of the secret in the keychain / secrets file.
    pub secret_ref: String,
}

const COLS: &str = "s.id, s.server, s.url, s.session_id, s.session_title, s.secret_ref, s.created_at, s.updated_at, s.expires_at, (SELECT COUNT(*) FROM sessions WHERE id = s.session_id)";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredShare> {
    let session_id: String = r.get(3)?;
    let exists: i64 = r.get(9)?;
    Ok(StoredShare {
        record: ShareRecord {
            id: r.get(0)?,
            server: r.get(1)?,
            url: r.get(2)?,
            session_id: Some(session_id),
            session_title: r.get(4)?,
            created_at: r.get(6)?,
            updated_at: r.get(7)?,
            expires_at: r.get(8)?,
            session_deleted: exists == 0,
        },
        secret_ref: r.get(5)?,
    })
}

impl SessionDb {
    /// Record a new share, or the update of one (same server and id).
    pub fn put_share(&mut self, s: &StoredShare) -> Result<()> {
        let r = &s.record;
        self.write(|tx| {
            tx.execute(
                "INSERT INTO shares (id, server, url, session_id, session_title, secret_ref, created_at, updated_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (server, id) DO UPDATE SET url = excluded.url, session_title = excluded.session_title,
                   updated_at = excluded.updated_at, expires_at = excluded.expires_at",
                params![
                    r.id,
                    r.server,
                    r.url,
                    r.session_id.clone().unwrap_or_default(),
                    r.session_title,
                    s.secret_ref,
                    r.created_at,
                    r.updated_at,
                    r.expires_at
                ],
            )
            .map_err(|e| tx.err(e))?;
            Ok(())
        })
    }

    /// Every share, newest first.
    pub fn shares(&self) -> Result<Vec<StoredShare>> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLS} FROM shares s ORDER BY s.created_at DESC, s.id"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], row)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// The newest share of a session.
    pub fn share_of_session(&self, session_id: &str) -> Result<Option<StoredShare>> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {COLS} FROM shares s WHERE s.session_id = ?1 ORDER BY s.created_at DESC LIMIT 1"
                ),
                [session_id],
                row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Shares whose id is `id` (on any server).
    pub fn shares_with_id(&self, id: &str) -> Result<Vec<StoredShare>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {COLS} FROM shares s WHERE s.id = ?1"))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([id], row)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Forget a share (after it was revoked).
    pub fn delete_share(&mut self, server: &str, id: &str) -> Result<bool> {
        self.write(|tx| {
            let n = tx
                .execute(
                    "DELETE FROM shares WHERE server = ?1 AND id = ?2",
                    params![server, id],
                )
                .map_err(|e| tx.err(e))?;
            Ok(n > 0)
        })
    }
}
