//! One-time import of the pre-SQLite store, `~/.mia-code-sessions.json`.

use std::path::{Path, PathBuf};

use mia_protocol::{Session, SessionId, SessionStatus};
use serde_json::Value;

use crate::db::SessionDb;
use crate::error::{Result, StoreError};
use crate::sessions::{insert_session, project_id_for};

/// One legacy entry that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LegacySkip {
    /// Position of the entry in the file's session list (0-based).
    pub index: usize,
    pub reason: String,
}

/// What the import did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LegacyImport {
    pub source: PathBuf,
    pub imported: usize,
    pub skipped: Vec<LegacySkip>,
    /// Where the file was renamed to; `None` when it was left in place
    /// (unreadable as a whole, so nothing could be imported).
    pub renamed_to: Option<PathBuf>,
    /// Why the file as a whole could not be read.
    pub file_error: Option<String>,
}

impl std::fmt::Display for LegacyImport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(err) = &self.file_error {
            return write!(
                f,
                "could not import {}: {err}; the file was left untouched",
                self.source.display()
            );
        }
        write!(f, "Migrated {} sessions from JSON to SQLite", self.imported)?;
        if !self.skipped.is_empty() {
            let list: Vec<String> = self
                .skipped
                .iter()
                .map(|s| format!("#{}: {}", s.index, s.reason))
                .collect();
            write!(
                f,
                "; skipped {} malformed entries ({})",
                self.skipped.len(),
                list.join("; ")
            )?;
        }
        Ok(())
    }
}

pub(crate) fn import_if_needed(db: &mut SessionDb, json: &Path) -> Result<Option<LegacyImport>> {
    if !json.is_file() || db.session_count()? > 0 {
        return Ok(None);
    }
    let report = import(db, json)?;
    if report.imported == 0
        && report
            .file_error
            .as_deref()
            .is_some_and(|e| e.starts_with("another"))
    {
        tracing::info!(source = %json.display(), "legacy store imported by another process");
        return Ok(None);
    }
    if report.file_error.is_some() {
        tracing::warn!(source = %json.display(), "{report}");
    } else {
        tracing::info!(source = %json.display(), imported = report.imported, skipped = report.skipped.len(), "{report}");
    }
    Ok(Some(report))
}

fn import(db: &mut SessionDb, json: &Path) -> Result<LegacyImport> {
    let mut report = LegacyImport {
        source: json.to_path_buf(),
        imported: 0,
        skipped: Vec::new(),
        renamed_to: None,
        file_error: None,
    };
    let text = match std::fs::read_to_string(json) {
        Ok(t) => t,
        Err(e) => {
            report.file_error = Some(format!("cannot read it: {e}"));
            return Ok(report);
        }
    };
    let entries = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(items)) => items,
        Ok(Value::Object(mut map)) => match map.remove("sessions") {
            Some(Value::Array(items)) => items,
            _ => {
                report.file_error = Some(
                    "expected a list of sessions or an object with a \"sessions\" list".into(),
                );
                return Ok(report);
            }
        },
        Ok(_) => {
            report.file_error =
                Some("expected a list of sessions or an object with a \"sessions\" list".into());
            return Ok(report);
        }
        Err(e) => {
            report.file_error = Some(format!("it is not valid JSON ({e})"));
            return Ok(report);
        }
    };

    let mut sessions = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (index, entry) in entries.iter().enumerate() {
        match convert(entry) {
            Ok(mut s) => {
                if !seen.insert(s.id) {
                    // A repeated id keeps its data under a fresh id.
                    s.id = SessionId::new();
                    seen.insert(s.id);
                }
                sessions.push(s);
            }
            Err(reason) => report.skipped.push(LegacySkip { index, reason }),
        }
    }

    let expected = sessions.len();
    let imported = db.write(|tx| {
        // Another process that opened at the same time may have imported
        // already (we hold the write lock now): then there is nothing to do.
        let existing: i64 = tx
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .map_err(|e| tx.err(e))?;
        if existing > 0 {
            return Ok(false);
        }
        for s in &sessions {
            insert_session(tx, s, None)?;
        }
        let count: i64 = tx
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .map_err(|e| tx.err(e))?;
        if usize::try_from(count).ok() != Some(expected) {
            return Err(StoreError::InvalidInput(format!(
                "legacy import verification failed: expected {expected} sessions, found {count}; nothing was imported"
            )));
        }
        Ok(true)
    })?;
    if !imported {
        report.file_error = Some("another mia-code process imported it at the same time".into());
        return Ok(report);
    }
    report.imported = expected;

    let renamed = json.with_file_name(".mia-code-sessions.json.migrated");
    match std::fs::rename(json, &renamed) {
        Ok(()) => {}
        // Renamed by a process that raced us to it: the import stands.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && renamed.exists() => {}
        Err(source) => {
            return Err(StoreError::Io {
                action: "rename imported legacy store",
                path: json.to_path_buf(),
                source,
            });
        }
    }
    report.renamed_to = Some(renamed);
    Ok(report)
}

fn convert(entry: &Value) -> std::result::Result<Session, String> {
    let obj = entry
        .as_object()
        .ok_or_else(|| format!("expected an object, found {}", type_name(entry)))?;
    let directory = match obj.get("projectRoot") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(other) => {
            return Err(format!(
                "projectRoot must be a non-empty string, found {}",
                type_name(other)
            ));
        }
        None => return Err("missing projectRoot".into()),
    };
    let created_at = match obj.get("startedAt") {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .ok_or_else(|| format!("startedAt {n} is not a timestamp"))?,
        Some(Value::String(s)) => parse_time(s)?,
        Some(other) => {
            return Err(format!(
                "startedAt must be a timestamp or date string, found {}",
                type_name(other)
            ));
        }
        None => return Err("missing startedAt".into()),
    };
    let model = match obj.get("model") {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let title = obj
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| "Imported session".to_string());
    let id = obj
        .get("id")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<SessionId>().ok())
        .unwrap_or_default();
    let hex = id.as_uuid().simple().to_string();
    Ok(Session {
        id,
        slug: format!("imported-{}", &hex[hex.len().saturating_sub(4)..]),
        project_id: project_id_for(&directory),
        directory,
        parent_id: None,
        fork: None,
        title,
        version: "legacy".into(),
        status: SessionStatus::Idle,
        agent: None,
        model,
        created_at,
        updated_at: created_at,
        archived_at: None,
        spawned_by: None,
        agent_models: Default::default(),
    })
}

fn parse_time(s: &str) -> std::result::Result<i64, String> {
    let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
        .map_err(|e| format!("startedAt {s:?} is not an RFC 3339 date ({e})"))?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000)
        .map_err(|_| format!("startedAt {s:?} is out of range"))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
