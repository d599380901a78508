use std::collections::HashMap;

use mia_protocol::{
    Message, MessageId, MessageMetadata, MessageType, NewMessage, Part, PartContent, PartId, Role,
    SessionId, now_ms,
};
use rusqlite::{OptionalExtension, params, types::Value as SqlValue};

use crate::db::{SessionDb, Tx};
use crate::error::{Result, StoreError};

/// Which messages of a session to load. Messages come back oldest first.
#[derive(Debug, Clone, Default)]
pub struct MessageQuery {
    /// Only messages after this one (cursor for the next page).
    pub after: Option<MessageId>,
    /// Only messages before this one (cursor for the previous page).
    pub before: Option<MessageId>,
    /// At most this many.
    pub limit: Option<u32>,
    /// With `limit`: take the newest `limit` messages instead of the oldest.
    pub tail: bool,
    /// Include messages a compaction summary replaced (the archive).
    pub include_compacted: bool,
}

impl SessionDb {
    /// Append a message and all its parts in one transaction, and bump the
    /// session's `updated_at`. Returns the stored message.
    pub fn add_message(&mut self, session_id: &SessionId, new: NewMessage) -> Result<Message> {
        let role = new.role.ok_or_else(|| {
            StoreError::InvalidInput("a message needs a role (user, assistant or system)".into())
        })?;
        let metadata_json = serde_json::to_string(&new.metadata)
            .map_err(|e| StoreError::InvalidInput(format!("message metadata: {e}")))?;
        let now = now_ms();
        let id = new.id.unwrap_or_default();
        let (session_key, id_key) = (session_id.to_string(), id.to_string());
        let parts = self.write(|tx| {
            let n = tx
                .prepare_cached("UPDATE sessions SET updated_at = ?1 WHERE id = ?2")
                .and_then(|mut s| s.execute(params![now, session_key]))
                .map_err(|e| tx.err(e))?;
            if n == 0 {
                return Err(StoreError::SessionNotFound(session_key.clone()));
            }
            tx.prepare_cached(
                "INSERT INTO messages (id, session_id, role, type, metadata, created_at, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages))",
            )
            .and_then(|mut s| {
                s.execute(params![
                    id_key,
                    session_key,
                    role.as_str(),
                    new.message_type.as_str(),
                    metadata_json,
                    now
                ])
            })
            .map_err(|e| tx.err(e))?;
            append_in(tx, session_id, &id, new.parts)
        })?;
        Ok(Message {
            id,
            session_id: *session_id,
            role,
            message_type: new.message_type,
            metadata: new.metadata,
            created_at: now,
            compacted_by: None,
            parts,
        })
    }

    /// Append parts to a stored message (tool results and snapshots arrive
    /// after the assistant message that called the tools). Returns them stored.
    pub fn append_parts(
        &mut self,
        session_id: &SessionId,
        message_id: &MessageId,
        contents: Vec<PartContent>,
    ) -> Result<Vec<Part>> {
        self.write(|tx| append_in(tx, session_id, message_id, contents))
    }

    /// Replace a message's metadata (usage and cost arrive when its step ends).
    pub fn update_message_metadata(
        &mut self,
        session_id: &SessionId,
        message_id: &MessageId,
        metadata: &MessageMetadata,
    ) -> Result<()> {
        let json = serde_json::to_string(metadata)
            .map_err(|e| StoreError::InvalidInput(format!("message metadata: {e}")))?;
        let (session_key, message_key) = (session_id.to_string(), message_id.to_string());
        let n = self.write(|tx| {
            tx.execute(
                "UPDATE messages SET metadata = ?1 WHERE id = ?2 AND session_id = ?3",
                params![json, message_key, session_key],
            )
            .map_err(|e| tx.err(e))
        })?;
        if n == 0 {
            return Err(StoreError::MessageNotFound {
                session: session_id.to_string(),
                id: message_id.to_string(),
            });
        }
        Ok(())
    }

    /// Messages of a session with their parts, oldest first.
    pub fn get_messages(&self, session_id: &SessionId, q: &MessageQuery) -> Result<Vec<Message>> {
        // Messages and their parts from one consistent view of the database.
        self.read(|| self.get_messages_in(session_id, q))
    }

    fn get_messages_in(&self, session_id: &SessionId, q: &MessageQuery) -> Result<Vec<Message>> {
        let mut sql = String::from(
            "SELECT id, role, type, metadata, created_at, compacted_by FROM messages WHERE session_id = ?1",
        );
        let mut args: Vec<SqlValue> = vec![session_id.to_string().into()];
        if let Some(after) = &q.after {
            args.push(self.cursor(session_id, after)?.into());
            sql.push_str(&format!(" AND seq > ?{}", args.len()));
        }
        if let Some(before) = &q.before {
            args.push(self.cursor(session_id, before)?.into());
            sql.push_str(&format!(" AND seq < ?{}", args.len()));
        }
        if !q.include_compacted {
            sql.push_str(" AND compacted_by IS NULL");
        }
        let desc = q.tail && q.limit.is_some();
        sql.push_str(if desc {
            " ORDER BY seq DESC"
        } else {
            " ORDER BY seq"
        });
        if let Some(limit) = q.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }

        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let mut messages = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, i64>(4)?,
                    row.get::<_, Option<String>>(5)?,
                ))
            })
            .map_err(|e| self.err(e))?
            .map(|row| {
                let (id, role, kind, metadata, created_at, compacted_by) =
                    row.map_err(|e| self.err(e))?;
                decode_message(
                    session_id,
                    id,
                    &role,
                    &kind,
                    &metadata,
                    created_at,
                    compacted_by,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        if desc {
            messages.reverse();
        }
        // All parts of the page in one indexed query.
        let parts_sql = format!(
            "SELECT id, message_id, type, content, \"index\", created_at FROM parts WHERE message_id IN (SELECT id FROM ({sql}))"
        );
        self.attach_parts_with(&mut messages, &parts_sql, &args)?;
        Ok(messages)
    }

    /// One message with its parts.
    pub fn get_message(&self, session_id: &SessionId, id: &MessageId) -> Result<Message> {
        self.read(|| self.get_message_in(session_id, id))
    }

    fn get_message_in(&self, session_id: &SessionId, id: &MessageId) -> Result<Message> {
        let row = self
            .conn
            .query_row(
                "SELECT role, type, metadata, created_at, compacted_by FROM messages WHERE id = ?1 AND session_id = ?2",
                params![id.to_string(), session_id.to_string()],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, i64>(3)?,
                        row.get::<_, Option<String>>(4)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| StoreError::MessageNotFound {
                session: session_id.to_string(),
                id: id.to_string(),
            })?;
        let (role, kind, metadata, created_at, compacted_by) = row;
        let mut messages = vec![decode_message(
            session_id,
            id.to_string(),
            &role,
            &kind,
            &metadata,
            created_at,
            compacted_by,
        )?];
        self.attach_parts(&mut messages)?;
        messages.pop().ok_or_else(|| StoreError::MessageNotFound {
            session: session_id.to_string(),
            id: id.to_string(),
        })
    }

    /// Number of messages in a session (compacted ones included).
    pub fn message_count(&self, session_id: &SessionId) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT count(*) FROM messages WHERE session_id = ?1",
                [session_id.to_string()],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.err(e))
    }

    /// Number of messages of a session the model still sees (none a
    /// compaction summary replaced).
    pub fn visible_message_count(&self, session_id: &SessionId) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT count(*) FROM messages WHERE session_id = ?1 AND compacted_by IS NULL",
                [session_id.to_string()],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.err(e))
    }

    /// The `seq` of a message (paging cursors).
    fn cursor(&self, session_id: &SessionId, id: &MessageId) -> Result<i64> {
        let key = id.to_string();
        let t: i64 = self
            .conn
            .query_row(
                "SELECT seq FROM messages WHERE id = ?1 AND session_id = ?2",
                params![key, session_id.to_string()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| StoreError::MessageNotFound {
                session: session_id.to_string(),
                id: key.clone(),
            })?;
        Ok(t)
    }

    fn attach_parts(&self, messages: &mut [Message]) -> Result<()> {
        let ids: Vec<SqlValue> = messages.iter().map(|m| m.id.to_string().into()).collect();
        let placeholders = vec!["?"; ids.len()].join(",");
        let sql = format!(
            "SELECT id, message_id, type, content, \"index\", created_at FROM parts WHERE message_id IN ({placeholders})"
        );
        self.attach_parts_with(messages, &sql, &ids)
    }

    /// Attach the parts selected by `sql` (with `args`) to `messages`, in index order.
    fn attach_parts_with(
        &self,
        messages: &mut [Message],
        sql: &str,
        args: &[SqlValue],
    ) -> Result<()> {
        if messages.is_empty() {
            return Ok(());
        }
        let index: HashMap<String, usize> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.to_string(), i))
            .collect();
        {
            let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(args.iter()), |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, String>(3)?,
                        row.get::<_, i64>(4)?,
                        row.get::<_, i64>(5)?,
                    ))
                })
                .map_err(|e| self.err(e))?;
            for row in rows {
                let (id, message_id, kind, content, idx, created_at) =
                    row.map_err(|e| self.err(e))?;
                let Some(&slot) = index.get(&message_id) else {
                    continue;
                };
                let message = &mut messages[slot];
                message.parts.push(Part {
                    id: id.parse().map_err(|e| decode_err("part id", e))?,
                    message_id: message.id,
                    index: u32::try_from(idx).map_err(|e| decode_err("part index", e))?,
                    created_at,
                    content: PartContent::from_stored_json(&kind, &content)
                        .map_err(|e| decode_err("part content", e))?,
                });
            }
        }
        for m in messages.iter_mut() {
            m.parts.sort_by_key(|p| p.index);
        }
        Ok(())
    }
}

fn decode_err(what: &'static str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Decode {
        what,
        detail: e.to_string(),
    }
}

fn decode_message(
    session_id: &SessionId,
    id: String,
    role: &str,
    kind: &str,
    metadata: &str,
    created_at: i64,
    compacted_by: Option<String>,
) -> Result<Message> {
    Ok(Message {
        id: id.parse().map_err(|e| decode_err("message id", e))?,
        session_id: *session_id,
        role: Role::parse(role).ok_or_else(|| decode_err("message role", role))?,
        // A type from a newer build reads as a normal message rather than failing.
        message_type: MessageType::parse(kind).unwrap_or_default(),
        metadata: serde_json::from_str::<MessageMetadata>(metadata)
            .map_err(|e| decode_err("message metadata", e))?,
        created_at,
        compacted_by: compacted_by
            .map(|c| c.parse())
            .transpose()
            .map_err(|e| decode_err("compacted_by", e))?,
        parts: Vec::new(),
    })
}

/// Append `contents` after a message's last part, inside `tx`.
pub(crate) fn append_in(
    tx: &Tx<'_>,
    session_id: &SessionId,
    message_id: &MessageId,
    contents: Vec<PartContent>,
) -> Result<Vec<Part>> {
    let now = now_ms();
    let (session_key, message_key) = (session_id.to_string(), message_id.to_string());
    let next: Option<i64> = tx
        .query_row(
            "SELECT (SELECT coalesce(max(\"index\") + 1, 0) FROM parts WHERE message_id = ?1) FROM messages WHERE id = ?1 AND session_id = ?2",
            params![message_key, session_key],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| tx.err(e))?;
    let Some(next) = next else {
        return Err(StoreError::MessageNotFound {
            session: session_key.clone(),
            id: message_key.clone(),
        });
    };
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO parts (id, message_id, type, content, \"index\", created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(|e| tx.err(e))?;
    let mut parts = Vec::with_capacity(contents.len());
    for (i, content) in contents.into_iter().enumerate() {
        let json = content
            .to_stored_json()
            .map_err(|e| StoreError::InvalidInput(format!("part {i}: {e}")))?;
        let index = u32::try_from(next + i as i64)
            .map_err(|_| StoreError::InvalidInput("too many parts".into()))?;
        let part = Part {
            id: PartId::new(),
            message_id: *message_id,
            index,
            created_at: now,
            content,
        };
        stmt.execute(params![
            part.id.to_string(),
            message_key,
            part.content.kind(),
            json,
            part.index,
            now
        ])
        .map_err(|e| tx.err(e))?;
        parts.push(part);
    }
    tx.execute(
        "UPDATE sessions SET updated_at = ?1 WHERE id = ?2",
        params![now, session_key],
    )
    .map_err(|e| tx.err(e))?;
    Ok(parts)
}
