//! Undo, revert and redo on real sessions (spec 021): plan from the
//! session's indexed steps, execute with conflict checks, record the step and
//! append the revert message to the session.

use mia_protocol::{
    Event, HistoryAction, MessageType, NewMessage, PartContent, RevertConflict, RevertSummary,
    Role, SessionId,
};

use crate::CoreError;
use crate::runtime::Runtime;
use crate::snapshots::{new_snapshot, new_step};

/// The plan of a history operation over the session's step records.
pub(crate) fn plan(
    repo: &mia_snapshot::SnapshotRepo,
    records: &[mia_snapshot::StepRecord],
    action: &HistoryAction,
) -> Result<mia_snapshot::RevertPlan, mia_snapshot::SnapshotError> {
    match action {
        HistoryAction::Undo { step: None } => repo.plan_undo(records),
        HistoryAction::Undo { step: Some(s) } => repo.plan_undo_step(records, s),
        HistoryAction::Revert { message_id } => repo.plan_revert(records, message_id),
        HistoryAction::Redo => repo.plan_redo(records),
    }
}

impl Runtime {
    /// Undo, revert or redo. Refused while a turn runs in the session.
    pub async fn revert(
        &self,
        session_id: SessionId,
        action: HistoryAction,
        force: bool,
    ) -> Result<RevertSummary, CoreError> {
        let state = self.state(session_id).await?;
        let kind = match &action {
            HistoryAction::Undo { .. } => "undo",
            HistoryAction::Revert { .. } => "revert",
            HistoryAction::Redo => "redo",
        };
        // Held for the whole operation: no turn, here or elsewhere, changes
        // the session's files or history meanwhile.
        self.claim(&state, kind).await?;
        let result = self.revert_claimed(session_id, action, force).await;
        self.release(&state).await;
        result
    }

    async fn revert_claimed(
        &self,
        session_id: SessionId,
        action: HistoryAction,
        force: bool,
    ) -> Result<RevertSummary, CoreError> {
        let records = self.step_records(session_id).await?;
        // A fork's history starts at the fork: what came before is its parent's.
        let fork = self
            .loaded_state(session_id)
            .and_then(|st| st.with(|l| l.session.fork.clone()));
        if let Some(f) = fork
            && records.is_empty()
            && !matches!(action, HistoryAction::Redo)
        {
            return Err(CoreError::Invalid(format!(
                "nothing to undo in this fork yet: its undo history starts at the fork, and the changes made before it belong to session {} (undo them there)",
                f.source_session_id
            )));
        }
        let outcome = self
            .with_repo(session_id, move |repo| {
                let plan = plan(repo, &records, &action)?;
                repo.execute(&plan, force)
            })
            .await?;

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
            .inner
            .store
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
