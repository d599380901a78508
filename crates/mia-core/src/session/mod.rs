//! Sessions in this process: their live state, the resources the sessions
//! of one project share, and the store writes ops make.

pub(crate) mod claim;
mod ops;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mia_permission::{PermissionRule, SessionRules};
use mia_protocol::{Event, Message, MessageId, NewMessage, PartContent, Session, SessionId};
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::dispatch::*;
use crate::runtime::{Runtime, lock};

/// Per-session state shared by the actor's ops and the running turn.
pub(crate) struct SessionState {
    pub(crate) session: Mutex<Session>,
    pub(crate) directory: PathBuf,
    pub(crate) session_rules: Mutex<SessionRules>,
    /// Pending asks by request id.
    pub(crate) pending: Mutex<HashMap<String, PendingAsk>>,
    pub(crate) running: Mutex<Option<CancellationToken>>,
    /// The store claim held while `running` is set.
    pub(crate) claim: Mutex<Option<crate::session::claim::Held>>,
    pub(crate) queued_agent: Mutex<Option<String>>,
    pub(crate) todos: Arc<Mutex<mia_tools::TodoList>>,
    pub(crate) snapshots: Arc<Mutex<Option<mia_snapshot::SnapshotRepo>>>,
    /// Watches the project once the repo is open; narrows bash captures to
    /// what changed (a scan when it cannot tell).
    pub(crate) watcher: Arc<Mutex<Option<mia_snapshot::ProjectWatcher>>>,
    /// File-changing steps recorded in this process (retention runs after turns that added some).
    pub(crate) steps_taken: std::sync::atomic::AtomicUsize,
    /// The session's baseline snapshot is known to exist.
    pub(crate) has_baseline: std::sync::atomic::AtomicBool,
    /// "Always for this project" rules granted during the running turn.
    pub(crate) new_approvals: Mutex<Vec<PermissionRule>>,
}

/// What every session of one project in this process shares: one snapshot
/// repository handle and one file watcher (not one per session).
#[derive(Clone, Default)]
pub(crate) struct ProjectShared {
    pub(crate) snapshots: Arc<Mutex<Option<mia_snapshot::SnapshotRepo>>>,
    pub(crate) watcher: Arc<Mutex<Option<mia_snapshot::ProjectWatcher>>>,
}

impl Runtime {
    /// The live state of a session this process has opened, if any.
    pub(crate) fn loaded_state(&self, id: SessionId) -> Option<Arc<SessionState>> {
        lock(&self.inner.sessions).get(&id).cloned()
    }

    pub(crate) async fn state(&self, id: SessionId) -> Result<Arc<SessionState>, CoreError> {
        if let Some(s) = lock(&self.inner.sessions).get(&id) {
            return Ok(s.clone());
        }
        let session = self.inner.store.call(move |db| db.get_session(&id)).await?;
        let directory = PathBuf::from(&session.directory);
        let shared = lock(&self.inner.projects)
            .entry(directory.clone())
            .or_default()
            .clone();
        let state = Arc::new(SessionState {
            directory,
            session: Mutex::new(session),
            session_rules: Mutex::new(SessionRules::default()),
            pending: Mutex::new(HashMap::new()),
            running: Mutex::new(None),
            claim: Mutex::new(None),
            queued_agent: Mutex::new(None),
            todos: Arc::default(),
            snapshots: shared.snapshots,
            watcher: shared.watcher,
            steps_taken: std::sync::atomic::AtomicUsize::new(0),
            has_baseline: std::sync::atomic::AtomicBool::new(false),
            new_approvals: Mutex::new(Vec::new()),
        });
        Ok(lock(&self.inner.sessions)
            .entry(id)
            .or_insert(state)
            .clone())
    }

    pub(crate) async fn set_agent(
        &self,
        state: &SessionState,
        agent: &str,
    ) -> Result<(), CoreError> {
        let session = self
            .patch_session(
                state,
                mia_store::SessionPatch {
                    agent: Some(Some(agent.to_string())),
                    ..Default::default()
                },
            )
            .await?;
        self.emit(Event::SessionUpdated { session });
        Ok(())
    }

    /// Update the stored session and the cached copy.
    pub(crate) async fn patch_session(
        &self,
        state: &SessionState,
        patch: mia_store::SessionPatch,
    ) -> Result<Session, CoreError> {
        let id = lock(&state.session).id;
        let session = self
            .inner
            .store
            .call(move |db| db.update_session(&id, patch))
            .await?;
        *lock(&state.session) = session.clone();
        Ok(session)
    }

    pub(crate) async fn set_status(
        &self,
        state: &SessionState,
        status: mia_protocol::SessionStatus,
    ) -> Result<(), CoreError> {
        self.patch_session(
            state,
            mia_store::SessionPatch {
                status: Some(status),
                ..Default::default()
            },
        )
        .await?;
        Ok(())
    }

    pub(crate) async fn add_message(
        &self,
        session_id: SessionId,
        msg: NewMessage,
    ) -> Result<Message, CoreError> {
        let stored = self
            .inner
            .store
            .call(move |db| db.add_message(&session_id, msg))
            .await?;
        self.emit(Event::MessageStored {
            message: stored.clone(),
        });
        Ok(stored)
    }

    pub(crate) async fn append(
        &self,
        session_id: SessionId,
        message_id: MessageId,
        parts: Vec<PartContent>,
    ) -> Result<(), CoreError> {
        self.inner
            .store
            .call(move |db| db.append_parts(&session_id, &message_id, parts))
            .await?;
        Ok(())
    }
}
