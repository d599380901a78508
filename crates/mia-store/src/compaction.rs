//! Compaction (spec 019, archive instead of delete): one transaction inserts
//! the summary message and marks every visible message up to the cut as
//! replaced by it. Nothing is deleted; `include_compacted` reads it all.

use mia_protocol::{
    Message, MessageId, MessageMetadata, MessageType, PartContent, Role, SessionId, now_ms,
};
use rusqlite::params;

use crate::db::SessionDb;
use crate::error::{Result, StoreError};

/// What a compaction stores.
#[derive(Debug, Clone)]
pub struct CompactRequest {
    pub session: SessionId,
    /// The messages the summary stands for (an earlier summary among them):
    /// each must be a visible message of the session.
    pub archive: Vec<MessageId>,
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
        let archive_json = serde_json::to_string(
            &req.archive
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
        )
        .map_err(|e| StoreError::InvalidInput(format!("archive list: {e}")))?;
        let expected = req.archive.len();
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
            if expected == 0 {
                return Err(StoreError::InvalidInput(
                    "a compaction needs the messages it summarises; nothing was compacted".into(),
                ));
            }
            tx.prepare_cached(
                "INSERT INTO messages (id, session_id, role, type, metadata, created_at, seq) VALUES (?1, ?2, 'system', 'compaction_summary', ?3, ?4, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages))",
            )
            .and_then(|mut s| s.execute(params![id_key, session_key, metadata_json, now]))
            .map_err(|e| tx.err(e))?;
            let parts = crate::messages::append_in(tx, &req.session, &id, vec![content.clone()])?;
            let archived = tx
                .prepare_cached(
                    "UPDATE messages SET compacted_by = ?1 WHERE session_id = ?2 AND compacted_by IS NULL AND id IN (SELECT value FROM json_each(?3))",
                )
                .and_then(|mut s| s.execute(params![id_key, session_key, archive_json]))
                .map_err(|e| tx.err(e))?;
            // Another writer changed the session meanwhile (or a bad list):
            // nothing is stored.
            if archived != expected {
                return Err(StoreError::InvalidInput(format!(
                    "{} of the {expected} messages to compact are no longer visible messages of session {session_key}; nothing was compacted",
                    expected - archived
                )));
            }
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
