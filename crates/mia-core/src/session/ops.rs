//! `Runtime::submit`: every Op a front end can send.

use std::path::PathBuf;

use mia_protocol::{Event, HistoryAction, MessageId, Op, PermissionReplyKind, SessionId};
use mia_providers::ModelRef;
use mia_store::NewSession;

use crate::CoreError;
use crate::agents::Agents;
use crate::dispatch::reply_option;
use crate::runtime::{OpResult, Runtime, lock};

impl Runtime {
    /// Apply an Op. Turns run in the background; their Events follow.
    pub async fn submit(&self, op: Op) -> Result<OpResult, CoreError> {
        crate::limits::check_op(&op)?;
        match op {
            Op::CreateSession {
                directory,
                title,
                agent,
                model,
            } => self.create_session(directory, title, agent, model).await,
            Op::UserMessage {
                session_id,
                text,
                agent,
                model,
            } => self.user_message(session_id, text, agent, model).await,
            Op::PermissionReply {
                session_id,
                request_id,
                reply,
            } => self.permission_reply(session_id, request_id, reply).await,
            Op::Cancel { session_id } => self.cancel(session_id).await,
            Op::Undo {
                session_id,
                step,
                force,
            } => self.undo_op(session_id, step, force).await,
            Op::UpdateSession {
                session_id,
                title,
                archived,
            } => self.update_session(session_id, title, archived).await,
            Op::DeleteSession { session_id } => self.delete_session(session_id).await,
            Op::Revert {
                session_id,
                message_id,
                force,
            } => self.revert_op(session_id, message_id, force).await,
            Op::Redo { session_id, force } => self.redo_op(session_id, force).await,
            Op::SwitchAgent { session_id, agent } => self.switch_agent(session_id, agent).await,
            Op::Fork {
                session_id,
                message_id,
                with_files,
            } => self
                .fork(session_id, message_id, with_files)
                .await
                .map(OpResult::Forked),
            Op::Promote { session_id } => self.promote(session_id).await.map(OpResult::Session),
            Op::Compact { session_id } => self.compact(session_id).await.map(OpResult::Compacted),
            Op::SetModel {
                session_id,
                agent,
                model,
            } => self.set_model(session_id, agent, model).await,
        }
    }

    /// A new session in a project directory.
    async fn create_session(
        &self,
        directory: String,
        title: Option<String>,
        agent: Option<String>,
        model: Option<String>,
    ) -> Result<OpResult, CoreError> {
        let dir = PathBuf::from(&directory);
        let dir = crate::limits::project_dir(&dir, &self.inner.opts.paths)?;
        if let Some(m) = &model {
            m.parse::<ModelRef>()
                .map_err(|_| CoreError::BadModel(m.clone()))?;
        }
        let config = self.load_config(Some(dir.clone())).await?;
        let agent = agent.unwrap_or_else(|| config.default_agent().to_string());
        Agents::from_config(&config).session_agent(&agent)?;
        let directory = dir.display().to_string();
        let session = self
            .inner
            .store
            .call(move |db| {
                db.create_session(NewSession {
                    directory,
                    title: title.unwrap_or_default(),
                    agent: Some(agent),
                    model,
                    ..Default::default()
                })
            })
            .await?;
        self.emit(Event::SessionUpdated {
            session: session.clone(),
        });
        Ok(OpResult::Session(session))
    }

    /// Start a turn (in the background; its Events follow).
    async fn user_message(
        &self,
        session_id: SessionId,
        text: String,
        agent: Option<String>,
        model: Option<String>,
    ) -> Result<OpResult, CoreError> {
        let state = self.state(session_id).await?;
        let cancel = self.claim(&state, "turn").await?;
        let rt = self.clone();
        tokio::spawn(async move {
            rt.turn(state, text, agent, model, cancel).await;
        });
        Ok(OpResult::Done)
    }

    /// Answer a pending permission ask.
    async fn permission_reply(
        &self,
        session_id: SessionId,
        request_id: String,
        reply: PermissionReplyKind,
    ) -> Result<OpResult, CoreError> {
        let state = self.state(session_id).await?;
        let kind = reply_option(&reply);
        let waiting = state.with(|l| {
            let Some((request, _)) = l.pending.get(&request_id) else {
                return Err(CoreError::NoSuchRequest(request_id.clone()));
            };
            let offered = &request.options;
            if !offered.contains(&kind) {
                // Not consumed: the ask still waits for a valid answer.
                return Err(CoreError::Refused(format!(
                    "`{kind}` is not offered for this request (offered: {}); an \"always\" answer is not offered for commands with expansions or dangerous parts",
                    offered
                        .iter()
                        .map(|o| o.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            Ok(l.pending.remove(&request_id))
        })?;
        if let Some((_, tx)) = waiting {
            let _ = tx.send(reply);
        }
        Ok(OpResult::Done)
    }

    /// Stop the running turn.
    async fn cancel(&self, session_id: SessionId) -> Result<OpResult, CoreError> {
        let state = self.state(session_id).await?;
        if let Some(token) = state.with(|l| l.running.clone()) {
            token.cancel();
        }
        Ok(OpResult::Done)
    }

    /// Undo the last (or one) file-changing step.
    async fn undo_op(
        &self,
        session_id: SessionId,
        step: Option<String>,
        force: bool,
    ) -> Result<OpResult, CoreError> {
        self.revert(session_id, HistoryAction::Undo { step }, force)
            .await
            .map(OpResult::Reverted)
    }

    /// `/model [AGENT] provider/model`: persisted for the session, per agent.
    async fn set_model(
        &self,
        session_id: SessionId,
        agent: Option<String>,
        model: Option<String>,
    ) -> Result<OpResult, CoreError> {
        if let Some(m) = &model {
            mia_config::model_ref::parse_model_ref(m).map_err(CoreError::Invalid)?;
            m.parse::<ModelRef>()
                .map_err(|_| CoreError::BadModel(m.clone()))?;
        }
        let state = self.state(session_id).await?;
        let config = self.load_config(Some(state.directory.clone())).await?;
        let agent = match agent {
            Some(a) => {
                Agents::from_config(&config).get(&a)?;
                a
            }
            None => state
                .with(|l| l.session.agent.clone())
                .unwrap_or_else(|| config.default_agent().to_string()),
        };
        let mut picked = state.with(|l| l.session.agent_models.clone());
        match model {
            Some(m) => {
                picked.insert(agent.clone(), m);
            }
            None => {
                picked.remove(&agent);
            }
        }
        let session = self
            .patch_session(
                &state,
                mia_store::SessionPatch {
                    agent_models: Some(picked),
                    ..Default::default()
                },
            )
            .await?;
        tracing::info!(session = %session_id, %agent, "model picked");
        self.emit(Event::SessionUpdated {
            session: session.clone(),
        });
        Ok(OpResult::Session(session))
    }

    /// Rename or (un)archive.
    async fn update_session(
        &self,
        session_id: SessionId,
        title: Option<String>,
        archived: Option<bool>,
    ) -> Result<OpResult, CoreError> {
        let state = self.state(session_id).await?;
        let mut patch = mia_store::SessionPatch::default();
        if let Some(t) = title {
            let t = t.trim().to_string();
            if t.is_empty() {
                return Err(CoreError::Invalid("a session title cannot be empty".into()));
            }
            patch.title = Some(t);
        }
        let mut session = self.patch_session(&state, patch).await?;
        if let Some(archived) = archived {
            session = self
                .inner
                .store
                .call(move |db| {
                    if archived {
                        db.archive_session(&session_id)
                    } else {
                        db.unarchive_session(&session_id)
                    }
                })
                .await?;
            state.set_session(session.clone());
        }
        self.emit(Event::SessionUpdated {
            session: session.clone(),
        });
        Ok(OpResult::Session(session))
    }

    /// Delete the session and its history.
    pub(crate) async fn delete_session(
        &self,
        session_id: SessionId,
    ) -> Result<OpResult, CoreError> {
        // Claim the session like a turn does, so no turn (here or
        // in another process) can start while it is deleted.
        let state = self.state(session_id).await?;
        self.claim(&state, "delete").await?;
        self.end_session(session_id, "delete").await;
        let deleted = self
            .inner
            .store
            .call(move |db| db.delete_session(&session_id))
            .await;
        // The lease row went with the session; this stops the heartbeat.
        self.release(&state).await;
        deleted?;
        lock(&self.inner.sessions).remove(&session_id);
        self.release_session_snapshots(&state).await;
        // The session's private /tmp goes with it.
        let key = session_id.to_string();
        let _ = tokio::task::spawn_blocking(move || mia_sandbox::remove_session_tmp(&key)).await;
        Ok(OpResult::Done)
    }

    /// Revert to before a message.
    async fn revert_op(
        &self,
        session_id: SessionId,
        message_id: MessageId,
        force: bool,
    ) -> Result<OpResult, CoreError> {
        self.revert(
            session_id,
            HistoryAction::Revert {
                message_id: message_id.to_string(),
            },
            force,
        )
        .await
        .map(OpResult::Reverted)
    }

    /// Redo the last undo/revert.
    async fn redo_op(&self, session_id: SessionId, force: bool) -> Result<OpResult, CoreError> {
        self.revert(session_id, HistoryAction::Redo, force)
            .await
            .map(OpResult::Reverted)
    }

    /// Switch the primary agent (queued while a turn runs).
    async fn switch_agent(
        &self,
        session_id: SessionId,
        agent: String,
    ) -> Result<OpResult, CoreError> {
        let state = self.state(session_id).await?;
        let config = self.load_config(Some(state.directory.clone())).await?;
        let agents = Agents::from_config(&config);
        agents.session_agent(&agent)?;
        let from = state.with(|l| l.session.agent.clone()).unwrap_or_default();
        let running = state.with(|l| l.running.is_some());
        if running {
            state.with(|l| l.queued_agent = Some(agent.clone()));
        } else {
            self.set_agent(&state, &agent).await?;
        }
        tracing::info!(session = %session_id, %from, to = %agent, queued = running, "agent switch");
        self.emit(Event::AgentSwitched {
            session_id,
            from,
            to: agent,
            queued: running,
        });
        Ok(OpResult::Done)
    }
}
