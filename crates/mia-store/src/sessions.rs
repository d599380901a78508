use mia_protocol::{ForkInfo, Session, SessionId, SessionStatus, now_ms};
use rusqlite::{OptionalExtension, Row, params, types::Value as SqlValue};
use sha2::{Digest, Sha256};

use crate::db::{SessionDb, Tx};
use crate::error::{Result, StoreError};

/// The stable project id of a directory: the first 16 hex digits of the
/// SHA-256 of its path (spec 018: "derived from directory path hash").
/// Callers pass the canonical absolute path.
pub fn project_id_for(directory: &str) -> String {
    let digest = Sha256::digest(directory.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// What a new session starts with.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// Canonical absolute project root.
    pub directory: String,
    pub title: String,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub parent_id: Option<SessionId>,
    pub fork: Option<ForkInfo>,
    /// A subagent's session: who spawned it.
    pub spawned_by: Option<mia_protocol::SpawnInfo>,
    /// Overrides `created_at` (legacy import keeps the original start time).
    pub created_at: Option<i64>,
    /// Keeps an existing id (legacy import); a fresh UUID v7 otherwise.
    pub id: Option<SessionId>,
}

/// A partial update; `updated_at` is set automatically.
#[derive(Debug, Clone, Default)]
pub struct SessionPatch {
    pub title: Option<String>,
    pub slug: Option<String>,
    pub status: Option<SessionStatus>,
    pub agent: Option<Option<String>>,
    pub model: Option<Option<String>>,
    /// Replace the models picked per agent.
    pub agent_models: Option<std::collections::BTreeMap<String, String>>,
}

/// Filters for [`SessionDb::list_sessions`]; all optional, combined with AND.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    pub project_id: Option<String>,
    pub directory: Option<String>,
    /// Created at or after (ms).
    pub since: Option<i64>,
    /// Created before (ms).
    pub until: Option<i64>,
    pub status: Option<SessionStatus>,
    pub include_archived: bool,
    pub limit: Option<u32>,
}

/// A listed session with its message count.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SessionListItem {
    #[serde(flatten)]
    pub session: Session,
    pub message_count: u64,
}

pub(crate) const SESSION_COLUMNS: &str = "id, slug, project_id, directory, parent_id, fork, title, version, status, agent, model, created_at, updated_at, archived_at, spawned_by, agent_models";

/// A session's status as every reader sees it: busy while some process
/// holds a live claim on it (see `leases.rs`); idle when the claim left
/// behind is dead (its owner was killed: no heartbeat for 15 s); else as
/// stored.
pub(crate) const STATUS_EXPR: &str = "CASE WHEN EXISTS (SELECT 1 FROM session_leases WHERE session_id = id AND heartbeat_at > CAST(strftime('%s', 'now') AS INTEGER) * 1000 - 15000) THEN (CASE status WHEN 'idle' THEN 'busy' ELSE status END) WHEN EXISTS (SELECT 1 FROM session_leases WHERE session_id = id) THEN 'idle' ELSE status END";

/// The columns read back, status as [`STATUS_EXPR`].
pub(crate) fn session_select() -> String {
    SESSION_COLUMNS.replace(", status,", &format!(", ({STATUS_EXPR}),"))
}

pub(crate) fn session_from_row(row: &Row<'_>) -> rusqlite::Result<Session> {
    let decode = |i: usize, what: &'static str| {
        move |e: String| {
            rusqlite::Error::FromSqlConversionFailure(
                i,
                rusqlite::types::Type::Text,
                format!("{what}: {e}").into(),
            )
        }
    };
    let id: String = row.get(0)?;
    let parent: Option<String> = row.get(4)?;
    let fork: Option<String> = row.get(5)?;
    let status: String = row.get(8)?;
    Ok(Session {
        id: id
            .parse()
            .map_err(|e: mia_protocol::IdParseError| decode(0, "id")(e.to_string()))?,
        slug: row.get(1)?,
        project_id: row.get(2)?,
        directory: row.get(3)?,
        parent_id: parent
            .map(|p| p.parse())
            .transpose()
            .map_err(|e: mia_protocol::IdParseError| decode(4, "parent_id")(e.to_string()))?,
        fork: fork
            .map(|f| serde_json::from_str(&f))
            .transpose()
            .map_err(|e| decode(5, "fork")(e.to_string()))?,
        title: row.get(6)?,
        version: row.get(7)?,
        status: SessionStatus::parse(&status)
            .ok_or_else(|| decode(8, "status")(format!("unknown status {status}")))?,
        agent: row.get(9)?,
        model: row.get(10)?,
        created_at: row.get(11)?,
        updated_at: row.get(12)?,
        archived_at: row.get(13)?,
        spawned_by: row
            .get::<_, Option<String>>(14)?
            .map(|f| serde_json::from_str(&f))
            .transpose()
            .map_err(|e| decode(14, "spawned_by")(e.to_string()))?,
        agent_models: row
            .get::<_, Option<String>>(15)?
            .map(|f| serde_json::from_str(&f))
            .transpose()
            .map_err(|e| decode(15, "agent_models")(e.to_string()))?
            .unwrap_or_default(),
    })
}

/// `fix the auth bug` + id → `fix-the-auth-bug-3f2a`.
pub(crate) fn make_slug(title: &str, id: &SessionId) -> String {
    let mut words: Vec<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(5)
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        words.push("session".into());
    }
    let hex = id.as_uuid().simple().to_string();
    let suffix = &hex[hex.len().saturating_sub(4)..];
    format!("{}-{suffix}", words.join("-"))
}

impl SessionDb {
    /// Insert a session row and return it.
    pub fn create_session(&mut self, new: NewSession) -> Result<Session> {
        if new.directory.trim().is_empty() {
            return Err(StoreError::InvalidInput(
                "a session needs the project directory it belongs to".into(),
            ));
        }
        let id = new.id.unwrap_or_default();
        let now = now_ms();
        let session = Session {
            id,
            slug: make_slug(&new.title, &id),
            project_id: project_id_for(&new.directory),
            directory: new.directory,
            parent_id: new.parent_id,
            fork: new.fork,
            spawned_by: new.spawned_by,
            agent_models: Default::default(),
            title: new.title,
            version: env!("CARGO_PKG_VERSION").to_string(),
            status: SessionStatus::Idle,
            agent: new.agent,
            model: new.model,
            created_at: new.created_at.unwrap_or(now),
            updated_at: now,
            archived_at: None,
        };
        let fork_json = session
            .fork
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| StoreError::InvalidInput(format!("fork metadata: {e}")))?;
        self.write(|tx| {
            insert_session(tx, &session, fork_json.as_deref())?;
            Ok(())
        })?;
        Ok(session)
    }

    pub fn get_session(&self, id: &SessionId) -> Result<Session> {
        self.conn
            .query_row(
                &format!("SELECT {} FROM sessions WHERE id = ?1", session_select()),
                [id.to_string()],
                session_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| StoreError::SessionNotFound(id.to_string()))
    }

    /// Sessions matching `filter`, newest first, each with its message count.
    pub fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<SessionListItem>> {
        let mut sql = format!(
            "SELECT {}, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) FROM sessions s WHERE 1=1",
            session_select()
        );
        let mut args: Vec<SqlValue> = Vec::new();
        if let Some(p) = &filter.project_id {
            args.push(p.clone().into());
            sql.push_str(&format!(" AND project_id = ?{}", args.len()));
        }
        if let Some(d) = &filter.directory {
            args.push(d.clone().into());
            sql.push_str(&format!(" AND directory = ?{}", args.len()));
        }
        if let Some(t) = filter.since {
            args.push(t.into());
            sql.push_str(&format!(" AND created_at >= ?{}", args.len()));
        }
        if let Some(t) = filter.until {
            args.push(t.into());
            sql.push_str(&format!(" AND created_at < ?{}", args.len()));
        }
        if let Some(s) = filter.status {
            args.push(s.as_str().to_string().into());
            sql.push_str(&format!(" AND ({STATUS_EXPR}) = ?{}", args.len()));
        }
        if !filter.include_archived {
            sql.push_str(" AND archived_at IS NULL");
        }
        sql.push_str(" ORDER BY created_at DESC, id DESC");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), |row| {
                Ok(SessionListItem {
                    session: session_from_row(row)?,
                    message_count: row.get::<_, i64>(16)?.max(0) as u64,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Apply `patch`; `updated_at` becomes now.
    pub fn update_session(&mut self, id: &SessionId, patch: SessionPatch) -> Result<Session> {
        let key = id.to_string();
        self.write(|tx| {
            let mut sets: Vec<&str> = vec!["updated_at = ?1"];
            let mut args: Vec<SqlValue> = vec![now_ms().into()];
            let mut push = |col: &'static str, v: SqlValue, sets: &mut Vec<&str>| {
                args.push(v);
                sets.push(col);
            };
            if let Some(t) = patch.title {
                push("title", t.into(), &mut sets);
            }
            if let Some(s) = patch.slug {
                push("slug", s.into(), &mut sets);
            }
            if let Some(s) = patch.status {
                push("status", s.as_str().to_string().into(), &mut sets);
            }
            if let Some(a) = patch.agent {
                push("agent", a.map_or(SqlValue::Null, Into::into), &mut sets);
            }
            if let Some(m) = patch.model {
                push("model", m.map_or(SqlValue::Null, Into::into), &mut sets);
            }
            if let Some(m) = patch.agent_models {
                let json = if m.is_empty() {
                    SqlValue::Null
                } else {
                    serde_json::to_string(&m)
                        .map_err(|e| StoreError::InvalidInput(format!("agent models: {e}")))?
                        .into()
                };
                push("agent_models", json, &mut sets);
            }
            let assignments: Vec<String> = sets
                .iter()
                .enumerate()
                .map(|(i, col)| {
                    if i == 0 {
                        (*col).to_string()
                    } else {
                        format!("{col} = ?{}", i + 1)
                    }
                })
                .collect();
            args.push(key.clone().into());
            let sql = format!(
                "UPDATE sessions SET {} WHERE id = ?{}",
                assignments.join(", "),
                args.len()
            );
            let n = tx
                .execute(&sql, rusqlite::params_from_iter(args))
                .map_err(|e| tx.err(e))?;
            if n == 0 {
                return Err(StoreError::SessionNotFound(key.clone()));
            }
            Ok(())
        })?;
        self.get_session(id)
    }

    /// Hide a session from default listings; nothing is deleted.
    pub fn archive_session(&mut self, id: &SessionId) -> Result<Session> {
        self.set_archived(id, Some(now_ms()))
    }

    pub fn unarchive_session(&mut self, id: &SessionId) -> Result<Session> {
        self.set_archived(id, None)
    }

    fn set_archived(&mut self, id: &SessionId, at: Option<i64>) -> Result<Session> {
        let key = id.to_string();
        let n = self.write(|tx| {
            tx.execute(
                "UPDATE sessions SET archived_at = ?1, updated_at = ?2 WHERE id = ?3",
                params![at, now_ms(), key],
            )
            .map_err(|e| tx.err(e))
        })?;
        if n == 0 {
            return Err(StoreError::SessionNotFound(id.to_string()));
        }
        self.get_session(id)
    }

    /// Delete a session with its messages and parts (cascade). Child forks
    /// keep their history; their `parent_id` becomes null, `fork` still names
    /// the source.
    pub fn delete_session(&mut self, id: &SessionId) -> Result<()> {
        let key = id.to_string();
        let n = self.write(|tx| {
            tx.execute("DELETE FROM sessions WHERE id = ?1", [&key])
                .map_err(|e| tx.err(e))
        })?;
        if n == 0 {
            return Err(StoreError::SessionNotFound(id.to_string()));
        }
        Ok(())
    }

    /// Sessions (archived included) not updated since `cutoff_ms`, oldest
    /// first: what `sessions.retentionDays` deletes.
    pub fn sessions_untouched_since(&self, cutoff_ms: i64) -> Result<Vec<SessionId>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM sessions WHERE updated_at < ?1 ORDER BY updated_at")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([cutoff_ms], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for id in rows {
            let id = id.map_err(|e| self.err(e))?;
            if let Ok(id) = id.parse() {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// Number of sessions, archived included.
    pub fn session_count(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.err(e))
    }
}

pub(crate) fn insert_session(tx: &Tx<'_>, s: &Session, fork_json: Option<&str>) -> Result<()> {
    tx.prepare_cached(&format!(
        "INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            s.id.to_string(),
            s.slug,
            s.project_id,
            s.directory,
            s.parent_id.map(|p| p.to_string()),
            fork_json,
            s.title,
            s.version,
            s.status.as_str(),
            s.agent,
            s.model,
            s.created_at,
            s.updated_at,
            s.archived_at,
            s.spawned_by
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?,
            (!s.agent_models.is_empty())
                .then(|| serde_json::to_string(&s.agent_models))
                .transpose()
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?,
        ])
    })
    .map_err(|e| {
        if let rusqlite::Error::SqliteFailure(f, _) = &e
            && f.code == rusqlite::ErrorCode::ConstraintViolation
        {
            return StoreError::InvalidInput(format!(
                "session {} cannot be stored: {e} (duplicate id or unknown parent session)",
                s.id
            ));
        }
        tx.err(e)
    })?;
    Ok(())
}
