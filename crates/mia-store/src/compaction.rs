//! Compaction (spec 019, archive instead of delete): one transaction inserts
//! the summary message and marks every visible message up to the cut as
//! replaced by it. Nothing is deleted; `include_compacted` reads it all.

use mia_protocol::{
    Message, MessageId, MessageMetadata, MessageType, PartContent, Role, SessionId, now_ms,
};
use rusqlite::{OptionalExtension, params};

use crate::db::SessionDb;
use crate::error::{Result, StoreError};

/// What a compaction stores.
#[derive(Debug, Clone)]
pub struct CompactRequest {
    pub session: SessionId,
    /// The last message the summary stands for: it and every visible
    /// message before it (an earlier summary too) are archived.
    pub through: MessageId,
    pub summary: String,
    /// How many messages the summary stands for (shown with it).
    pub compacted_messages: u32,
    pub metadata: MessageMetadata,
}

impl SessionDb {
    /// Store a compaction (see [`CompactRequest`]); returns the summary
    /// message and how many messages it archived.
    pub fn compact_session(&mut self, req: CompactRequest) -> Result<(Message, u64)> {
        let session_key = req.session.to_string();
        let through_key = req.through.to_string();
        let metadata_json = serde_json::to_string(&req.metadata)
            .map_err(|e| StoreError::InvalidInput(format!("message metadata: {e}")))?;
        let id = MessageId::new();
        let id_key = id.to_string();
        let now = now_ms();
        let content = PartContent::CompactionSummary {
            summary: req.summary.clone(),
            compacted_messages: req.compacted_messages,
        };
        let (parts, archived) = self.write(|tx| {
            let seq: Option<(i64, Option<String>)> = tx
                .query_row(
                    "SELECT seq, compacted_by FROM messages WHERE id = ?1 AND session_id = ?2",
                    params![through_key, session_key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(|e| tx.err(e))?;
            let Some((seq, None)) = seq else {
                return Err(StoreError::InvalidInput(format!(
                    "message {through_key} is not a visible message of session {session_key}; nothing was compacted"
                )));
            };
            tx.prepare_cached(
                "INSERT INTO messages (id, session_id, role, type, metadata, created_at, seq) VALUES (?1, ?2, 'system', 'compaction_summary', ?3, ?4, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages))",
            )
            .and_then(|mut s| s.execute(params![id_key, session_key, metadata_json, now]))
            .map_err(|e| tx.err(e))?;
            let parts = crate::messages::append_in(tx, &req.session, &id, vec![content.clone()])?;
            let archived = tx
                .prepare_cached(
                    "UPDATE messages SET compacted_by = ?1 WHERE session_id = ?2 AND seq <= ?3 AND compacted_by IS NULL AND id != ?1",
                )
                .and_then(|mut s| s.execute(params![id_key, session_key, seq]))
                .map_err(|e| tx.err(e))?;
            Ok((parts, archived as u64))
        })?;
        Ok((
            Message {
                id,
                session_id: req.session,
                role: Role::System,
                message_type: MessageType::CompactionSummary,
                metadata: req.metadata,
                created_at: now,
                compacted_by: None,
                parts,
            },
            archived,
        ))
    }
}
