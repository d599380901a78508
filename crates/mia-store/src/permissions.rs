//! Permission persistence (issue 3): the audit log of permission checks,
//! "always for this project" approvals (listed and revocable), and per-project
//! workspace trust. The permission engine (mia-permission) produces the values;
//! this module only stores them.

use mia_protocol::{AuditRecord, PermissionAction, PermissionRule};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::db::SessionDb;
use crate::error::{Result, StoreError};

/// A stored audit row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredPermissionAudit {
    pub id: i64,
    #[serde(flatten)]
    pub record: AuditRecord,
}

/// Which audit rows to read (newest first).
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    pub session: Option<String>,
    pub decision: Option<PermissionAction>,
    /// At most this many rows (default 100).
    pub limit: Option<u32>,
}

/// A persisted "always for this project" approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectApproval {
    pub id: i64,
    /// Canonical absolute project root.
    pub project: String,
    /// The agent that was asked: the approval applies to that agent only.
    pub agent: String,
    pub rule: PermissionRule,
    pub session: Option<String>,
    pub created_at: i64,
}

fn action_from(s: &str) -> Result<PermissionAction> {
    match s {
        "allow" => Ok(PermissionAction::Allow),
        "ask" => Ok(PermissionAction::Ask),
        "deny" => Ok(PermissionAction::Deny),
        other => Err(StoreError::Decode {
            what: "permission action",
            detail: format!("unknown action {other:?}"),
        }),
    }
}

type ApprovalTuple = (
    i64,
    String,
    String,
    Option<String>,
    String,
    Option<String>,
    i64,
    String,
);

fn approval_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApprovalTuple> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
    ))
}

fn to_approval(
    (id, project, permission, pattern, action, session, created_at, agent): ApprovalTuple,
) -> Result<ProjectApproval> {
    Ok(ProjectApproval {
        id,
        project,
        agent,
        rule: PermissionRule {
            permission,
            pattern,
            action: action_from(&action)?,
        },
        session,
        created_at,
    })
}

const APPROVAL_COLUMNS: &str =
    "id, project, permission, pattern, action, session_id, created_at, agent";

impl SessionDb {
    /// Append audit rows (one transaction, not fsync'd on its own: they are
    /// made durable by the next synced commit, e.g. the tool result).
    pub fn record_permission_checks(&mut self, records: &[AuditRecord]) -> Result<()> {
        self.write_relaxed(|tx| {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO permission_audit (ts, session_id, agent, permission, target, decision, rule, layer, source, reason)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .map_err(|e| tx.err(e))?;
            for r in records {
                stmt.execute(params![
                    r.timestamp_ms,
                    r.session,
                    r.agent,
                    r.permission,
                    r.target,
                    r.decision.as_str(),
                    r.matched_rule,
                    r.layer,
                    r.source,
                    r.reason
                ])
                .map_err(|e| tx.err(e))?;
            }
            Ok(())
        })
    }

    /// Append one audit row.
    pub fn record_permission_check(&mut self, record: &AuditRecord) -> Result<()> {
        self.record_permission_checks(std::slice::from_ref(record))
    }

    /// Audit rows, newest first.
    pub fn permission_audit(&self, q: &AuditQuery) -> Result<Vec<StoredPermissionAudit>> {
        let limit = i64::from(q.limit.unwrap_or(100));
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, ts, session_id, agent, permission, target, decision, rule, layer, source, reason
                 FROM permission_audit
                 WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR decision = ?2)
                 ORDER BY ts DESC, id DESC LIMIT ?3",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![q.session, q.decision.map(PermissionAction::as_str), limit],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, String>(6)?,
                        r.get::<_, Option<String>>(7)?,
                        r.get::<_, Option<String>>(8)?,
                        r.get::<_, Option<String>>(9)?,
                        r.get::<_, String>(10)?,
                    ))
                },
            )
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(
                |(
                    id,
                    ts,
                    session,
                    agent,
                    permission,
                    target,
                    decision,
                    rule,
                    layer,
                    source,
                    reason,
                )| {
                    Ok(StoredPermissionAudit {
                        id,
                        record: AuditRecord {
                            timestamp_ms: ts,
                            session,
                            agent,
                            permission,
                            target,
                            matched_rule: rule,
                            layer,
                            source,
                            decision: action_from(&decision)?,
                            reason,
                        },
                    })
                },
            )
            .collect()
    }

    /// Persist "always for this project" rules given to `agent`; an identical
    /// rule is kept once per agent. Returns the stored approvals (existing
    /// ones for duplicates).
    pub fn add_project_approvals(
        &mut self,
        project: &str,
        agent: &str,
        rules: &[PermissionRule],
        session: Option<&str>,
    ) -> Result<Vec<ProjectApproval>> {
        if project.trim().is_empty() {
            return Err(StoreError::InvalidInput(
                "project approvals need the project root directory".into(),
            ));
        }
        if agent.trim().is_empty() {
            return Err(StoreError::InvalidInput(
                "project approvals need the agent that was asked".into(),
            ));
        }
        let now = mia_protocol::now_ms();
        self.write(|tx| {
            let mut out = Vec::with_capacity(rules.len());
            for rule in rules {
                tx.execute(
                    "INSERT OR IGNORE INTO permission_approvals (project, permission, pattern, action, session_id, created_at, agent)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![project, rule.permission, rule.pattern, rule.action.as_str(), session, now, agent],
                )
                .map_err(|e| tx.err(e))?;
                let row = tx
                    .query_row(
                        &format!(
                            "SELECT {APPROVAL_COLUMNS} FROM permission_approvals
                             WHERE project = ?1 AND agent = ?5 AND permission = ?2 AND ifnull(pattern, '') = ifnull(?3, '') AND action = ?4"
                        ),
                        params![project, rule.permission, rule.pattern, rule.action.as_str(), agent],
                        approval_row,
                    )
                    .map_err(|e| tx.err(e))?;
                out.push(to_approval(row)?);
            }
            Ok(out)
        })
    }

    /// Approvals of one project (oldest first), or of every project when `project` is `None`.
    pub fn project_approvals(&self, project: Option<&str>) -> Result<Vec<ProjectApproval>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {APPROVAL_COLUMNS} FROM permission_approvals
                 WHERE ?1 IS NULL OR project = ?1 ORDER BY project, id"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![project], approval_row)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(to_approval).collect()
    }

    /// The approval rules of a project given to `agent`, in checking order
    /// (newest first), for the engine's `PolicyInput::project_approvals`.
    pub fn project_approval_rules(
        &self,
        project: &str,
        agent: &str,
    ) -> Result<Vec<PermissionRule>> {
        let mut v = self.project_approvals(Some(project))?;
        v.retain(|a| a.agent == agent);
        v.reverse();
        Ok(v.into_iter().map(|a| a.rule).collect())
    }

    /// Revoke one approval by id; returns what was removed.
    pub fn revoke_project_approval(&mut self, id: i64) -> Result<ProjectApproval> {
        self.write(|tx| {
            let row = tx
                .query_row(
                    &format!("SELECT {APPROVAL_COLUMNS} FROM permission_approvals WHERE id = ?1"),
                    params![id],
                    approval_row,
                )
                .optional()
                .map_err(|e| tx.err(e))?
                .ok_or_else(|| {
                    StoreError::InvalidInput(format!(
                        "no project approval with id {id}; `mia-code permissions approvals list` shows the ids"
                    ))
                })?;
            tx.execute("DELETE FROM permission_approvals WHERE id = ?1", params![id])
                .map_err(|e| tx.err(e))?;
            to_approval(row)
        })
    }

    /// Mark a workspace trusted (idempotent; keeps the first trust time).
    pub fn trust_workspace(&mut self, project: &str) -> Result<()> {
        if project.trim().is_empty() {
            return Err(StoreError::InvalidInput(
                "workspace trust needs the project root directory".into(),
            ));
        }
        let now = mia_protocol::now_ms();
        self.write(|tx| {
            tx.execute(
                "INSERT OR IGNORE INTO workspace_trust (project, trusted_at) VALUES (?1, ?2)",
                params![project, now],
            )
            .map_err(|e| tx.err(e))?;
            Ok(())
        })
    }

    /// Withdraw trust; returns whether the workspace was trusted.
    pub fn untrust_workspace(&mut self, project: &str) -> Result<bool> {
        self.write(|tx| {
            let n = tx
                .execute(
                    "DELETE FROM workspace_trust WHERE project = ?1",
                    params![project],
                )
                .map_err(|e| tx.err(e))?;
            Ok(n > 0)
        })
    }

    /// When the workspace was trusted (ms since the epoch), if it was.
    pub fn workspace_trusted_at(&self, project: &str) -> Result<Option<i64>> {
        self.conn
            .query_row(
                "SELECT trusted_at FROM workspace_trust WHERE project = ?1",
                params![project],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Has the user trusted this workspace?
    pub fn is_workspace_trusted(&self, project: &str) -> Result<bool> {
        Ok(self.workspace_trusted_at(project)?.is_some())
    }

    /// Pin the hash of the project's hook set the person approved
    /// (replacing an earlier one).
    pub fn approve_hooks(&mut self, project: &str, hash: &str) -> Result<()> {
        let now = mia_protocol::now_ms();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO hook_approvals (project, hash, approved_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(project) DO UPDATE SET hash = excluded.hash, approved_at = excluded.approved_at",
                params![project, hash, now],
            )
            .map_err(|e| tx.err(e))?;
            Ok(())
        })
    }

    /// Forget the approved hook set (with the workspace's trust).
    pub fn forget_hooks(&mut self, project: &str) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "DELETE FROM hook_approvals WHERE project = ?1",
                params![project],
            )
            .map_err(|e| tx.err(e))?;
            Ok(())
        })
    }

    /// The approved hook set's hash, if any.
    pub fn approved_hooks(&self, project: &str) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT hash FROM hook_approvals WHERE project = ?1",
                params![project],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> (tempfile::TempDir, SessionDb) {
        let dir = tempfile::tempdir().unwrap();
        let db = SessionDb::open(dir.path().join("data.db")).unwrap();
        (dir, db)
    }

    fn rule(action: PermissionAction, permission: &str, pattern: Option<&str>) -> PermissionRule {
        PermissionRule {
            permission: permission.into(),
            pattern: pattern.map(str::to_string),
            action,
        }
    }

    fn audit(ts: i64, session: &str, decision: PermissionAction) -> AuditRecord {
        AuditRecord {
            timestamp_ms: ts,
            session: Some(session.into()),
            agent: "build".into(),
            permission: "write".into(),
            target: "Cargo.lock".into(),
            matched_rule: Some("deny write *.lock".into()),
            layer: Some("project".into()),
            source: Some("/p/.mia-code.json".into()),
            decision,
            reason: "Permission denied: cannot write to Cargo.lock".into(),
        }
    }

    #[test]
    fn audit_rows_round_trip_newest_first_and_filter() {
        let (_d, mut db) = db();
        db.record_permission_checks(&[
            audit(1, "s1", PermissionAction::Deny),
            audit(2, "s1", PermissionAction::Allow),
        ])
        .unwrap();
        db.record_permission_check(&audit(3, "s2", PermissionAction::Ask))
            .unwrap();
        let all = db.permission_audit(&AuditQuery::default()).unwrap();
        assert_eq!(
            all.iter()
                .map(|r| r.record.timestamp_ms)
                .collect::<Vec<_>>(),
            vec![3, 2, 1]
        );
        assert_eq!(all[2].record, audit(1, "s1", PermissionAction::Deny));
        let s1 = db
            .permission_audit(&AuditQuery {
                session: Some("s1".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(s1.len(), 2);
        let denies = db
            .permission_audit(&AuditQuery {
                decision: Some(PermissionAction::Deny),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(denies.len(), 1);
        let one = db
            .permission_audit(&AuditQuery {
                limit: Some(1),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn approvals_are_persisted_deduplicated_listed_and_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.db");
        let npm = rule(PermissionAction::Allow, "bash", Some("npm run dev *"));
        let id = {
            let mut db = SessionDb::open(&path).unwrap();
            let a = db
                .add_project_approvals("/proj", "build", std::slice::from_ref(&npm), Some("s1"))
                .unwrap();
            let again = db
                .add_project_approvals("/proj", "build", std::slice::from_ref(&npm), Some("s2"))
                .unwrap();
            assert_eq!(a[0].id, again[0].id, "same rule stored once");
            db.add_project_approvals(
                "/proj",
                "build",
                &[rule(PermissionAction::Allow, "plan_exit", None)],
                None,
            )
            .unwrap();
            db.add_project_approvals("/other", "build", std::slice::from_ref(&npm), None)
                .unwrap();
            // The same rule given to another agent is a separate approval.
            let other = db
                .add_project_approvals("/proj", "custom", std::slice::from_ref(&npm), None)
                .unwrap();
            assert_ne!(other[0].id, a[0].id);
            assert_eq!(other[0].agent, "custom");
            a[0].id
        };
        // survives reopening (a restart)
        let mut db = SessionDb::open(&path).unwrap();
        let proj = db.project_approvals(Some("/proj")).unwrap();
        assert_eq!(proj.len(), 3);
        assert_eq!(proj[0].rule, npm);
        assert_eq!(proj[0].session.as_deref(), Some("s1"));
        assert_eq!(db.project_approvals(None).unwrap().len(), 4);
        let rules = db.project_approval_rules("/proj", "build").unwrap();
        assert_eq!(rules.len(), 2, "only build's approvals");
        assert_eq!(rules[0].permission, "plan_exit", "newest first");
        assert_eq!(
            db.project_approval_rules("/proj", "custom").unwrap(),
            vec![npm.clone()]
        );
        assert!(
            db.project_approval_rules("/proj", "plan")
                .unwrap()
                .is_empty()
        );
        let gone = db.revoke_project_approval(id).unwrap();
        assert_eq!(gone.rule, npm);
        assert_eq!(db.project_approvals(Some("/proj")).unwrap().len(), 2);
        let err = db.revoke_project_approval(id).unwrap_err().to_string();
        assert!(err.contains("approvals list"), "{err}");
        assert!(
            db.add_project_approvals(" ", "build", std::slice::from_ref(&npm), None)
                .is_err()
        );
        assert!(
            db.add_project_approvals("/proj", " ", &[npm], None)
                .is_err()
        );
    }

    #[test]
    fn workspace_trust_is_per_project_and_persisted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.db");
        {
            let mut db = SessionDb::open(&path).unwrap();
            assert!(!db.is_workspace_trusted("/proj").unwrap());
            db.trust_workspace("/proj").unwrap();
            let first = db.workspace_trusted_at("/proj").unwrap();
            db.trust_workspace("/proj").unwrap();
            assert_eq!(db.workspace_trusted_at("/proj").unwrap(), first);
        }
        let mut db = SessionDb::open(&path).unwrap();
        assert!(db.is_workspace_trusted("/proj").unwrap());
        assert!(!db.is_workspace_trusted("/proj_evil").unwrap());
        assert!(db.untrust_workspace("/proj").unwrap());
        assert!(!db.untrust_workspace("/proj").unwrap());
        assert!(!db.is_workspace_trusted("/proj").unwrap());
    }
}
