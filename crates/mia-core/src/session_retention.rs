//! `sessions.retentionDays`: sessions nobody touched for that many days are
//! deleted with their messages, their snapshots' refs and their private
//! temporary directory, exactly as a person deleting them would (the same
//! operation: a session a turn holds, here or in another process, is
//! skipped and tried again next time). Unset, history is kept for ever.
//! Runs at most once an hour in a long-lived process, and on
//! `mia-code snapshot gc`.

use mia_protocol::SessionId;

use crate::error::CoreError;
use crate::runtime::Runtime;

/// What a retention pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionsPruned {
    /// `sessions.retentionDays` (`None`: kept for ever; nothing was done).
    pub retention_days: Option<u32>,
    /// Sessions deleted.
    pub deleted: Vec<SessionId>,
    /// Sessions past the age that could not be deleted now (in use).
    pub skipped: Vec<(SessionId, String)>,
}

const DAY_MS: i64 = 24 * 3600 * 1000;

impl Runtime {
    /// Delete the sessions `sessions.retentionDays` (your global config)
    /// says are too old.
    pub async fn prune_sessions(&self) -> Result<SessionsPruned, CoreError> {
        let config = self.load_config(None).await?;
        let Some(days) = config
            .merged
            .sessions
            .as_ref()
            .and_then(|s| s.retention_days)
            .map(|d| d.get().min(36_500))
        else {
            return Ok(SessionsPruned::default());
        };
        let cutoff = mia_protocol::now_ms() - i64::from(days) * DAY_MS;
        let old = self
            .inner
            .store
            .call(move |db| db.sessions_untouched_since(cutoff))
            .await?;
        let mut out = SessionsPruned {
            retention_days: Some(days),
            ..SessionsPruned::default()
        };
        for id in old {
            match self.delete_session(id).await {
                Ok(_) => out.deleted.push(id),
                // Deleted meanwhile (another process's pass): nothing to do.
                Err(CoreError::Store(mia_store::StoreError::SessionNotFound(_))) => {}
                Err(e) => out.skipped.push((id, e.to_string())),
            }
        }
        if !out.deleted.is_empty() {
            tracing::info!(
                deleted = out.deleted.len(),
                days,
                "sessions older than sessions.retentionDays deleted"
            );
        }
        Ok(out)
    }
}
