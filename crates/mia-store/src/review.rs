//! Review comments (migration 0010): what a person wrote on diff lines of a
//! session, kept until sent to the agent or cleared.

use mia_protocol::SessionId;
use rusqlite::params;

use crate::db::SessionDb;
use crate::error::Result;

/// A review comment as stored (`quote`: the lines as they were).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredComment {
    pub id: String,
    pub session_id: SessionId,
    pub file: String,
    pub line: u32,
    pub end_line: u32,
    pub text: String,
    pub quote: Vec<String>,
    pub created_at: i64,
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredComment> {
    let session: String = r.get(1)?;
    let quote: String = r.get(6)?;
    Ok(StoredComment {
        id: r.get(0)?,
        session_id: session.parse().map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, Box::new(e))
        })?,
        file: r.get(2)?,
        line: r.get(3)?,
        end_line: r.get(4)?,
        text: r.get(5)?,
        quote: serde_json::from_str(&quote).unwrap_or_default(),
        created_at: r.get(7)?,
    })
}

impl SessionDb {
    pub fn add_review_comment(&mut self, c: &StoredComment) -> Result<()> {
        let quote = serde_json::to_string(&c.quote).unwrap_or_else(|_| "[]".into());
        self.write(|tx| {
            tx.execute(
                "INSERT INTO review_comments (id, session_id, file, line, end_line, body, quote, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    c.id,
                    c.session_id.to_string(),
                    c.file,
                    c.line,
                    c.end_line,
                    c.text,
                    quote,
                    c.created_at
                ],
            )
            .map_err(|e| tx.err(e))?;
            Ok(())
        })
    }

    /// A session's comments, oldest first.
    pub fn review_comments(&self, session: &SessionId) -> Result<Vec<StoredComment>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, session_id, file, line, end_line, body, quote, created_at
                 FROM review_comments WHERE session_id = ?1 ORDER BY created_at, rowid",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([session.to_string()], row)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Delete these comments of the session (all of them with `None`);
    /// how many went.
    pub fn delete_review_comments(
        &mut self,
        session: &SessionId,
        ids: Option<&[String]>,
    ) -> Result<usize> {
        let sid = session.to_string();
        self.write(|tx| {
            let n = match ids {
                None => tx
                    .execute("DELETE FROM review_comments WHERE session_id = ?1", [&sid])
                    .map_err(|e| tx.err(e))?,
                Some(ids) => {
                    let mut n = 0;
                    for id in ids {
                        n += tx
                            .execute(
                                "DELETE FROM review_comments WHERE session_id = ?1 AND id = ?2",
                                params![sid, id],
                            )
                            .map_err(|e| tx.err(e))?;
                    }
                    n
                }
            };
            Ok(n)
        })
    }
}
