//! Forking a session from one of its messages (spec 020), in one
//! transaction: the child session, the copied messages and parts (new ids,
//! ids inside parts remapped) and the "Forked from ..." marker commit
//! together or not at all.

use std::collections::HashMap;

use mia_protocol::{
    ForkInfo, Message, MessageId, MessageMetadata, MessageType, PartContent, PartId, Role, Session,
    SessionId, SessionStatus, now_ms,
};
use rusqlite::{OptionalExtension, params};

use crate::db::{SessionDb, Tx};
use crate::error::{Result, StoreError};
use crate::sessions::{insert_session, project_id_for};

/// Forks of forks stop here (spec 020: "limited to 10 levels").
pub const MAX_FORK_DEPTH: u32 = 10;

/// What to fork.
#[derive(Debug, Clone)]
pub struct ForkRequest {
    pub source: SessionId,
    /// The fork point; `None`: the source's last visible message.
    pub message: Option<MessageId>,
    /// Where the child works; `None`: the source's directory (a fork of the
    /// conversation only). A fork with files passes its new worktree.
    pub directory: Option<String>,
}

/// A fork as stored.
#[derive(Debug, Clone)]
pub struct Forked {
    pub session: Session,
    /// The fork point in the source session.
    pub fork_point: MessageId,
    /// Messages copied (the marker not counted).
    pub copied: u64,
    /// The appended "Forked from session ... at message ..." message.
    pub marker: Message,
}

/// See [`SessionDb::fork_files_point`].
#[derive(Debug, Clone, PartialEq)]
pub struct ForkFilesPoint {
    pub fork_point: MessageId,
    pub snapshot: Option<String>,
    /// (path, reason) of files the snapshot could not hold.
    pub left_out: Vec<(String, String)>,
}

/// Per-session figures the fork tree shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStats {
    /// Cost of the session's own messages (a fork's copied history is its
    /// parent's cost, not counted again).
    pub cost_usd: f64,
    /// Distinct files its file-changing steps changed.
    pub files_changed: u64,
}

impl SessionDb {
    /// Fork `req.source` at `req.message` (see [`ForkRequest`]).
    pub fn fork_session(&mut self, req: ForkRequest) -> Result<Forked> {
        // The copied rows passed their CHECK constraints (valid JSON) when
        // they were first written; checking megabytes of JSON again is most
        // of a big fork's time. Only for this transaction.
        // The WAL checkpoint the copied pages would trigger at commit is left
        // to `checkpoint`, which the runtime queues right after the fork
        // returns: the user waits for the fork, not for the checkpoint.
        self.conn
            .execute_batch("PRAGMA ignore_check_constraints = ON; PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 0")
            .map_err(|e| self.err(e))?;
        // Committed with its own fsync: an acknowledged fork survives a crash
        // (speed is not bought with durability).
        let forked = self.write(|tx| fork_in(tx, &req));
        let restored = self
            .conn
            .execute_batch("PRAGMA ignore_check_constraints = OFF; PRAGMA cache_size = -2000; PRAGMA wal_autocheckpoint = 1000")
            .map_err(|e| self.err(e));
        let forked = forked?;
        restored?;
        Ok(forked)
    }

    /// Copy what the write-ahead log holds into the database (a passive
    /// checkpoint: it never waits for readers or writers of other processes).
    pub fn checkpoint(&mut self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .map_err(|e| self.err(e))
    }

    /// Make a fork top-level: `parent_id` becomes null, its fork metadata is kept.
    pub fn promote_session(&mut self, id: &SessionId) -> Result<Session> {
        let key = id.to_string();
        self.write(|tx| {
            let parent: Option<Option<String>> = tx
                .query_row(
                    "SELECT parent_id FROM sessions WHERE id = ?1",
                    [&key],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| tx.err(e))?;
            match parent {
                None => Err(StoreError::SessionNotFound(key.clone())),
                Some(None) => Err(StoreError::InvalidInput(format!(
                    "session {key} is already a top-level session; only a fork can be promoted"
                ))),
                Some(Some(_)) => {
                    tx.execute(
                        "UPDATE sessions SET parent_id = NULL, updated_at = ?1 WHERE id = ?2",
                        params![now_ms(), key],
                    )
                    .map_err(|e| tx.err(e))?;
                    Ok(())
                }
            }
        })?;
        self.get_session(id)
    }

    /// The files at a fork point: the snapshot after the session's last
    /// file-changing step at or before it, else the one before its first
    /// step after it; `None` when the session never changed a file (its files
    /// are the directory's as they are now). With what that snapshot could
    /// not hold (path, reason), when it was indexed.
    pub fn fork_files_point(
        &self,
        source: &SessionId,
        message: Option<&MessageId>,
    ) -> Result<ForkFilesPoint> {
        self.read(|| {
            let err = |e| self.err(e);
            let (fork_point, seq) = fork_point(&self.conn, &err, source, message)?;
            let key = source.to_string();
            let at: Option<String> = self
                .conn
                .query_row(
                    "SELECT st.after_hash FROM snapshot_steps st JOIN messages m ON m.id = st.message_id \
                     WHERE st.session_id = ?1 AND m.seq <= ?2 ORDER BY st.seq DESC LIMIT 1",
                    params![key, seq],
                    |r| r.get(0),
                )
                .optional()
                .map_err(err)?;
            let snapshot = match at {
                Some(h) => Some(h),
                None => self
                    .conn
                    .query_row(
                        "SELECT st.before_hash FROM snapshot_steps st JOIN messages m ON m.id = st.message_id \
                         WHERE st.session_id = ?1 AND m.seq > ?2 ORDER BY st.seq LIMIT 1",
                        params![key, seq],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(err)?,
            };
            let mut left_out = Vec::new();
            if let Some(hash) = &snapshot {
                let excluded: Option<String> = self
                    .conn
                    .query_row(
                        "SELECT excluded FROM snapshots WHERE hash = ?1 ORDER BY seq DESC LIMIT 1",
                        [hash],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(err)?;
                if let Some(list) = excluded
                    .and_then(|e| serde_json::from_str::<Vec<serde_json::Value>>(&e).ok())
                {
                    for e in list {
                        let path = e.get("path").and_then(|p| p.as_str()).unwrap_or_default();
                        let reason = e.get("reason").and_then(|p| p.as_str()).unwrap_or("not captured");
                        if !path.is_empty() {
                            left_out.push((path.to_string(), reason.to_string()));
                        }
                    }
                }
            }
            Ok(ForkFilesPoint {
                fork_point,
                snapshot,
                left_out,
            })
        })
    }

    /// Cost and files changed of every session of a project, by session id.
    pub fn session_stats(&self, project_id: &str) -> Result<HashMap<SessionId, SessionStats>> {
        self.read(|| {
            let mut out: HashMap<SessionId, SessionStats> = HashMap::new();
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT s.id, (SELECT coalesce(sum(json_extract(m.metadata, '$.cost_usd')), 0.0) FROM messages m \
                     WHERE m.session_id = s.id AND m.seq > coalesce((SELECT max(f.seq) FROM messages f WHERE f.session_id = s.id AND f.type = 'fork'), 0)) \
                     FROM sessions s WHERE s.project_id = ?1",
                )
                .map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map([project_id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
                })
                .map_err(|e| self.err(e))?;
            for row in rows {
                let (id, cost) = row.map_err(|e| self.err(e))?;
                if let Ok(id) = id.parse::<SessionId>() {
                    out.entry(id).or_default().cost_usd = cost;
                }
            }
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT st.session_id, count(DISTINCT json_extract(c.value, '$.path')) \
                     FROM snapshot_steps st JOIN sessions s ON s.id = st.session_id, json_each(st.record, '$.changes') c \
                     WHERE s.project_id = ?1 AND st.kind = 'tool' GROUP BY st.session_id",
                )
                .map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map([project_id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
                })
                .map_err(|e| self.err(e))?;
            for row in rows {
                let (id, files) = row.map_err(|e| self.err(e))?;
                if let Ok(id) = id.parse::<SessionId>() {
                    out.entry(id).or_default().files_changed = files.max(0) as u64;
                }
            }
            Ok(out)
        })
    }
}

struct SourceRow {
    title: String,
    directory: String,
    agent: Option<String>,
    model: Option<String>,
    fork: Option<ForkInfo>,
    has_parent: bool,
}

fn fork_in(tx: &Tx<'_>, req: &ForkRequest) -> Result<Forked> {
    let source_key = req.source.to_string();
    let source: SourceRow = tx
        .query_row(
            "SELECT title, directory, agent, model, fork, parent_id IS NOT NULL FROM sessions WHERE id = ?1",
            [&source_key],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, bool>(5)?,
                ))
            },
        )
        .optional()
        .map_err(|e| tx.err(e))?
        .ok_or_else(|| StoreError::SessionNotFound(source_key.clone()))
        .and_then(|(title, directory, agent, model, fork, has_parent)| {
            Ok(SourceRow {
                title,
                directory,
                agent,
                model,
                has_parent,
                fork: fork
                    .map(|f| serde_json::from_str::<ForkInfo>(&f))
                    .transpose()
                    .map_err(|e| StoreError::Decode {
                        what: "fork metadata",
                        detail: e.to_string(),
                    })?,
            })
        })?;

    // A promoted fork is top-level again: its forks start a new tree.
    let depth = match (&source.fork, source.has_parent) {
        (Some(f), true) => f.fork_depth + 1,
        _ => 1,
    };
    if depth > MAX_FORK_DEPTH {
        return Err(StoreError::ForkDepthExceeded {
            session: source_key,
            depth: depth - 1,
            max: MAX_FORK_DEPTH,
        });
    }

    let (fork_point, fork_seq) = fork_point(tx, &|e| tx.err(e), &req.source, req.message.as_ref())?;

    // "(fork)", "(fork 2)", then "(fork 2.1)" for a fork of "(fork 2)".
    let siblings: i64 = tx
        .query_row(
            "SELECT count(*) FROM sessions WHERE parent_id = ?1 OR json_extract(fork, '$.source_session_id') = ?1",
            [&source_key],
            |r| r.get(0),
        )
        .map_err(|e| tx.err(e))?;
    let title = fork_title(
        &source.title,
        u32::try_from(siblings + 1).unwrap_or(u32::MAX),
    );

    let now = now_ms();
    let id = SessionId::new();
    let directory = req.directory.clone().unwrap_or(source.directory);
    let session = Session {
        id,
        slug: crate::sessions::make_slug(&title, &id),
        project_id: project_id_for(&directory),
        directory,
        parent_id: Some(req.source),
        fork: Some(ForkInfo {
            source_session_id: req.source,
            source_message_id: fork_point,
            forked_at: now,
            fork_depth: depth,
        }),
        title,
        version: env!("CARGO_PKG_VERSION").to_string(),
        status: SessionStatus::Idle,
        agent: source.agent,
        model: source.model,
        created_at: now,
        updated_at: now,
        archived_at: None,
        spawned_by: None,
        agent_models: Default::default(),
    };
    let fork_json = serde_json::to_string(&session.fork)
        .map_err(|e| StoreError::InvalidInput(format!("fork metadata: {e}")))?;
    insert_session(tx, &session, Some(&fork_json))?;
    // The models picked with /model come along.
    tx.execute(
        "UPDATE sessions SET agent_models = (SELECT agent_models FROM sessions WHERE id = ?1) WHERE id = ?2",
        params![source_key, id.to_string()],
    )
    .map_err(|e| tx.err(e))?;
    let picked: Option<String> = tx
        .query_row(
            "SELECT agent_models FROM sessions WHERE id = ?1",
            [id.to_string()],
            |r| r.get(0),
        )
        .map_err(|e| tx.err(e))?;
    let mut session = session;
    session.agent_models = picked
        .and_then(|p| serde_json::from_str(&p).ok())
        .unwrap_or_default();

    let copied = copy_messages(tx, &req.source, &id, fork_seq)?;

    // The marker: a system message the model never sees (its prefix stays
    // cacheable), shown in the conversation and the timeline.
    let marker_id = MessageId::new();
    let text = format!("Forked from session {} at message {fork_point}", req.source);
    let marker_part = PartContent::Text {
        text,
        synthetic: true,
    };
    let next_seq: i64 = tx
        .query_row("SELECT coalesce(max(seq), 0) + 1 FROM messages", [], |r| {
            r.get(0)
        })
        .map_err(|e| tx.err(e))?;
    tx.prepare_cached(
        "INSERT INTO messages (id, session_id, role, type, metadata, created_at, seq) VALUES (?1, ?2, 'system', 'fork', '{}', ?3, ?4)",
    )
    .and_then(|mut s| s.execute(params![marker_id.to_string(), id.to_string(), now, next_seq]))
    .map_err(|e| tx.err(e))?;
    let part_id = PartId::new();
    let json = marker_part
        .to_stored_json()
        .map_err(|e| StoreError::InvalidInput(format!("fork marker: {e}")))?;
    tx.prepare_cached(
        "INSERT INTO parts (id, message_id, type, content, \"index\", created_at) VALUES (?1, ?2, 'text', ?3, 0, ?4)",
    )
    .and_then(|mut s| s.execute(params![part_id.to_string(), marker_id.to_string(), json, now]))
    .map_err(|e| tx.err(e))?;
    let marker = Message {
        id: marker_id,
        session_id: id,
        role: Role::System,
        message_type: MessageType::Fork,
        metadata: MessageMetadata::default(),
        created_at: now,
        compacted_by: None,
        parts: vec![mia_protocol::Part {
            id: part_id,
            message_id: marker_id,
            index: 0,
            created_at: now,
            content: marker_part,
        }],
    };
    Ok(Forked {
        session,
        fork_point,
        copied,
        marker,
    })
}

/// The fork point's id and `seq`, checked: it must be a visible message of
/// the source session.
fn fork_point(
    tx: &rusqlite::Connection,
    err: &dyn Fn(rusqlite::Error) -> StoreError,
    source: &SessionId,
    message: Option<&MessageId>,
) -> Result<(MessageId, i64)> {
    let source_key = source.to_string();
    let Some(message) = message else {
        let last: Option<(String, i64)> = tx
            .query_row(
                "SELECT id, seq FROM messages WHERE session_id = ?1 AND compacted_by IS NULL ORDER BY seq DESC LIMIT 1",
                [&source_key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(err)?;
        let (id, seq) = last.ok_or_else(|| StoreError::InvalidForkPoint {
            session: source_key.clone(),
            message: String::new(),
            reason: "the session has no messages yet, so there is nothing to fork; start a new session instead".into(),
        })?;
        let id = id
            .parse()
            .map_err(|e: mia_protocol::IdParseError| StoreError::Decode {
                what: "message id",
                detail: e.to_string(),
            })?;
        return Ok((id, seq));
    };
    let key = message.to_string();
    let row: Option<(String, i64, Option<String>)> = tx
        .query_row(
            "SELECT session_id, seq, compacted_by FROM messages WHERE id = ?1",
            [&key],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(err)?;
    let invalid = |reason: String| StoreError::InvalidForkPoint {
        session: source_key.clone(),
        message: key.clone(),
        reason,
    };
    match row {
        None => Err(invalid(format!(
            "there is no message {key}; `mia-code sessions show {source_key}` lists the session's messages"
        ))),
        Some((owner, _, _)) if owner != source_key => Err(invalid(format!(
            "message {key} belongs to session {owner}, not {source_key}; fork {owner} instead, or pick one of {source_key}'s messages"
        ))),
        Some((_, _, Some(summary))) => Err(invalid(format!(
            "message {key} was replaced by the compaction summary {summary} and is no longer part of the conversation; fork from the summary or a later message"
        ))),
        Some((_, seq, None)) => Ok((*message, seq)),
    }
}

/// Copy the source's messages up to and including `fork_seq`, in `seq`
/// order, with new ids, inside SQL (no row leaves SQLite). Parts are copied
/// verbatim except a revert's target message, which is remapped to the
/// child's copy (parts of kinds a newer build wrote are copied as they are).
fn copy_messages(tx: &Tx<'_>, source: &SessionId, child: &SessionId, fork_seq: i64) -> Result<u64> {
    let source_key = source.to_string();
    let child_key = child.to_string();
    let run = |sql: &str, args: &[&dyn rusqlite::ToSql]| -> Result<usize> {
        tx.prepare_cached(sql)
            .and_then(|mut s| s.execute(args))
            .map_err(|e| tx.err(e))
    };
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS fork_map (old TEXT PRIMARY KEY NOT NULL, new TEXT NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID; DELETE FROM temp.fork_map;",
    )
    .map_err(|e| tx.err(e))?;
    let copied = run(
        "INSERT INTO temp.fork_map (old, new, seq) SELECT id, mia_new_id(), (SELECT coalesce(max(seq), 0) FROM messages) + row_number() OVER (ORDER BY seq) FROM messages WHERE session_id = ?1 AND seq <= ?2 ORDER BY seq",
        &[&source_key, &fork_seq],
    )?;
    run(
        "INSERT INTO messages (id, session_id, role, type, metadata, created_at, seq) SELECT f.new, ?1, m.role, m.type, m.metadata, m.created_at, f.seq FROM temp.fork_map f JOIN messages m ON m.id = f.old ORDER BY f.seq",
        &[&child_key],
    )?;
    // The archive, once its summaries exist. A summary outside the copied
    // range did not exist at the fork point: the messages it replaced are
    // part of the child's visible history.
    run(
        "UPDATE messages SET compacted_by = (SELECT s.new FROM temp.fork_map f JOIN messages o ON o.id = f.old JOIN temp.fork_map s ON s.old = o.compacted_by WHERE f.new = messages.id) WHERE session_id = ?1 AND id IN (SELECT f.new FROM temp.fork_map f JOIN messages o ON o.id = f.old WHERE o.compacted_by IS NOT NULL)",
        &[&child_key],
    )?;
    // A revert's target is a message of the copied range: remapped to the
    // child's copy. (Parts of kinds a newer build wrote are copied as they are.)
    run(
        "INSERT INTO parts (id, message_id, type, content, \"index\", created_at) \
         SELECT mia_new_id(), f.new, p.type, \
                CASE WHEN p.type = 'revert' AND json_extract(p.content, '$.target_message_id') IS NOT NULL \
                     THEN coalesce(json_set(p.content, '$.target_message_id', (SELECT t.new FROM temp.fork_map t WHERE t.old = json_extract(p.content, '$.target_message_id'))), p.content) \
                     ELSE p.content END, \
                p.\"index\", p.created_at \
         FROM temp.fork_map f JOIN parts p ON p.message_id = f.old",
        &[],
    )?;
    tx.execute_batch("DELETE FROM temp.fork_map")
        .map_err(|e| tx.err(e))?;
    Ok(copied as u64)
}

/// The title of fork number `n` of a session titled `source`: "t (fork)",
/// "t (fork 2)"; a fork of "t (fork 2)" is "t (fork 2.1)" (spec 020's tree).
pub fn fork_title(source: &str, n: u32) -> String {
    let source = source.trim();
    let (base, label) = split_fork_title(source);
    let base = if base.is_empty() {
        "Untitled session"
    } else {
        base
    };
    let label = match label {
        None if n <= 1 => String::new(),
        None => n.to_string(),
        Some("") => format!("1.{n}"),
        Some(l) => format!("{l}.{n}"),
    };
    if label.is_empty() {
        format!("{base} (fork)")
    } else {
        format!("{base} (fork {label})")
    }
}

/// "t (fork 2.1)" → ("t", Some("2.1")); "t (fork)" → ("t", Some("")); "t" → ("t", None).
fn split_fork_title(title: &str) -> (&str, Option<&str>) {
    let Some(start) = title.rfind(" (fork") else {
        return (title, None);
    };
    let rest = &title[start + " (fork".len()..];
    if rest == ")" {
        return (&title[..start], Some(""));
    }
    if let Some(label) = rest.strip_prefix(' ').and_then(|r| r.strip_suffix(')'))
        && !label.is_empty()
        && label
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return (&title[..start], Some(label));
    }
    (title, None)
}

#[cfg(test)]
mod tests {
    use super::fork_title;

    #[test]
    fn titles_follow_the_spec_tree() {
        assert_eq!(fork_title("fix-auth-bug", 1), "fix-auth-bug (fork)");
        assert_eq!(fork_title("fix-auth-bug", 2), "fix-auth-bug (fork 2)");
        assert_eq!(
            fork_title("fix-auth-bug (fork 2)", 1),
            "fix-auth-bug (fork 2.1)"
        );
        assert_eq!(
            fork_title("fix-auth-bug (fork 2.1)", 3),
            "fix-auth-bug (fork 2.1.3)"
        );
        assert_eq!(
            fork_title("fix-auth-bug (fork)", 1),
            "fix-auth-bug (fork 1.1)"
        );
        assert_eq!(fork_title("", 1), "Untitled session (fork)");
        // Not a fork label: kept as part of the title.
        assert_eq!(fork_title("a (fork x)", 1), "a (fork x) (fork)");
        assert_eq!(fork_title("a (forklift)", 2), "a (forklift) (fork 2)");
    }
}

/// One (agent, model) line of a session's usage.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageRow {
    pub agent: String,
    pub model: String,
    pub requests: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost_usd: f64,
}

impl SessionDb {
    /// Sessions a `task` call of `session` spawned (direct children).
    pub fn spawned_children(&self, session: &SessionId) -> Result<Vec<SessionId>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id FROM sessions WHERE json_extract(spawned_by, '$.session_id') = ?1 ORDER BY created_at",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([session.to_string()], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows.into_iter().filter_map(|r| r.parse().ok()).collect())
    }

    /// Each fork's own first prompt: its first user message after the fork
    /// marker (what tells sibling forks apart), by session.
    pub fn first_prompts_after_fork(
        &self,
        sessions: &[SessionId],
    ) -> Result<HashMap<SessionId, MessageId>> {
        let ids =
            serde_json::to_string(&sessions.iter().map(ToString::to_string).collect::<Vec<_>>())
                .map_err(|e| StoreError::InvalidInput(e.to_string()))?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.session_id, (SELECT m.id FROM messages m WHERE m.session_id = f.session_id \
                 AND m.role = 'user' AND m.type = 'normal' AND m.seq > f.seq ORDER BY m.seq LIMIT 1) \
                 FROM (SELECT session_id, max(seq) AS seq FROM messages \
                       WHERE type = 'fork' AND session_id IN (SELECT value FROM json_each(?1)) \
                       GROUP BY session_id) f",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([ids], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows
            .into_iter()
            .filter_map(|(s, m)| Some((s.parse().ok()?, m?.parse().ok()?)))
            .collect())
    }

    /// Usage and cost of the sessions' own messages (a fork's copied history
    /// is its parent's), per agent and model, from each message's metadata.
    pub fn usage(&self, sessions: &[SessionId]) -> Result<Vec<UsageRow>> {
        let ids =
            serde_json::to_string(&sessions.iter().map(ToString::to_string).collect::<Vec<_>>())
                .map_err(|e| StoreError::InvalidInput(e.to_string()))?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT coalesce(json_extract(m.metadata, '$.agent'), ''), coalesce(json_extract(m.metadata, '$.model'), ''), count(*), \
                 coalesce(sum(json_extract(m.metadata, '$.tokens.input')), 0), coalesce(sum(json_extract(m.metadata, '$.tokens.output')), 0), \
                 coalesce(sum(json_extract(m.metadata, '$.tokens.cache_read')), 0), coalesce(sum(json_extract(m.metadata, '$.tokens.cache_write')), 0), \
                 coalesce(sum(json_extract(m.metadata, '$.cost_usd')), 0.0) \
                 FROM messages m WHERE m.session_id IN (SELECT value FROM json_each(?1)) \
                 AND json_extract(m.metadata, '$.tokens') IS NOT NULL \
                 AND m.seq > coalesce((SELECT max(f.seq) FROM messages f WHERE f.session_id = m.session_id AND f.type = 'fork'), 0) \
                 GROUP BY 1, 2 ORDER BY 8 DESC, 1, 2",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([ids], |r| {
                Ok(UsageRow {
                    agent: r.get(0)?,
                    model: r.get(1)?,
                    requests: r.get::<_, i64>(2)?.max(0) as u64,
                    input: r.get::<_, i64>(3)?.max(0) as u64,
                    output: r.get::<_, i64>(4)?.max(0) as u64,
                    cache_read: r.get::<_, i64>(5)?.max(0) as u64,
                    cache_write: r.get::<_, i64>(6)?.max(0) as u64,
                    cost_usd: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }
}

impl SessionDb {
    /// The message of `session` holding the tool call `call_id`.
    pub fn message_with_call(&self, session: &SessionId, call_id: &str) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT m.id FROM parts p JOIN messages m ON m.id = p.message_id \
                 WHERE m.session_id = ?1 AND p.type = 'tool_call' AND json_extract(p.content, '$.call_id') = ?2 \
                 ORDER BY m.seq LIMIT 1",
                params![session.to_string(), call_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }
}
