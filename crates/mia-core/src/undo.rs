//! Undo, revert and redo on real sessions (spec 021): plan from the
//! session's indexed steps, execute with conflict checks, record the step and
//! append the revert message to the session.

use mia_protocol::{
    Event, MessageId, MessageType, NewMessage, PartContent, RevertConflict, RevertSummary, Role,
    SessionId,
};

use crate::CoreError;
use crate::runtime::{Runtime, lock, new_snapshot, new_step};

/// Which history operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Undo,
    /// Undo one step (step id or tool call id) of the timeline.
    UndoStep(String),
    Revert(MessageId),
    Redo,
}

impl Runtime {
    /// Undo, revert or redo. Refused while a turn runs in the session.
    pub async fn revert(
        &self,
        session_id: SessionId,
        action: Action,
        force: bool,
    ) -> Result<RevertSummary, CoreError> {
        let state = self.state(session_id).await?;
        if lock(&state.running).is_some() {
            return Err(CoreError::Busy(session_id.to_string()));
        }
        let rows = self
            .store()
            .call(move |db| db.snapshot_steps(&session_id))
            .await?;
        let records: Vec<mia_snapshot::StepRecord> = rows
            .into_iter()
            .map(|r| serde_json::from_value(r.step.record))
            .collect::<Result<_, _>>()
            .map_err(|e| {
                CoreError::Internal(format!("a stored snapshot step is unreadable: {e}"))
            })?;
        let config = mia_config::Config::load(&self.options().paths, Some(&state.directory))?;
        let snapshot_config = crate::runtime::snapshot_config(&config).unwrap_or_default();
        let repo = state.snapshots.clone();
        let dir = state.directory.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let mut guard = lock(&repo);
            if guard.is_none() {
                *guard = Some(
                    mia_snapshot::SnapshotRepo::open(&dir, snapshot_config)
                        .map_err(|e| e.to_string())?,
                );
            }
            let repo = guard
                .as_mut()
                .ok_or_else(|| "snapshot repository unavailable".to_string())?;
            let plan = match &action {
                Action::Undo => repo.plan_undo(&records),
                Action::UndoStep(step) => repo.plan_undo_step(&records, step),
                Action::Revert(m) => repo.plan_revert(&records, &m.to_string()),
                Action::Redo => repo.plan_redo(&records),
            }
            .map_err(|e| e.to_string())?;
            repo.execute(&plan, force).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| CoreError::Internal(format!("the revert task failed: {e}")))?
        .map_err(CoreError::Setup)?;

        let summary = RevertSummary {
            applied: outcome.applied,
            message: outcome.message.clone(),
            restored: outcome.restored.clone(),
            removed: outcome.removed.clone(),
            conflicts: outcome
                .conflicts
                .iter()
                .map(|c| RevertConflict {
                    path: c.path.clone(),
                    reason: c.reason.clone(),
                    backup: c.backup.clone(),
                })
                .collect(),
        };
        if !outcome.applied {
            return Ok(summary);
        }
        // Record the revert as a step (so it can be redone) and tell the session.
        let step = outcome
            .record
            .as_ref()
            .and_then(|r| new_step(session_id, r));
        let part = outcome.to_part();
        let text = outcome.message.clone();
        let pre_snapshot = outcome.pre_revert_snapshot.clone();
        let stored = self
            .store()
            .call(move |db| {
                if let Some(hash) = pre_snapshot {
                    let snap = mia_snapshot::Snapshot {
                        hash,
                        files: 0,
                        created_at: mia_protocol::now_ms(),
                        session_id: Some(session_id.to_string()),
                        message_id: None,
                        tool_call_id: None,
                        excluded: Vec::new(),
                        excluded_total: 0,
                        mode: mia_snapshot::CaptureMode::Paths,
                        ms: 0,
                    };
                    db.add_snapshot(&new_snapshot(
                        session_id,
                        &snap,
                        mia_store::SnapshotKind::Revert,
                    ))?;
                }
                if let Some(step) = step {
                    db.add_snapshot_step(&step)?;
                }
                db.add_message(
                    &session_id,
                    NewMessage {
                        role: Some(Role::System),
                        message_type: MessageType::Revert,
                        parts: vec![
                            PartContent::Text {
                                text,
                                synthetic: true,
                            },
                            part,
                        ],
                        ..Default::default()
                    },
                )
            })
            .await?;
        self.emit(Event::MessageStored { message: stored });
        Ok(summary)
    }
}
