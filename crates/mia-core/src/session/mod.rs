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
use crate::dispatch::PendingAsk;
use crate::runtime::{Runtime, lock};

/// Per-session state shared by the actor's ops and the running turn.
pub(crate) struct SessionState {
    pub(crate) session: Mutex<Session>,
    pub(crate) directory: PathBuf,
    /// "Always"/"never" answers for the session, per agent: an answer
    /// given to one agent never applies to another.
    pub(crate) session_rules: Mutex<HashMap<String, SessionRules>>,
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
    /// Project approvals answered during the running turn, with the agent asked.
    pub(crate) new_approvals: Mutex<Vec<(String, PermissionRule)>>,
    /// Where the session sits in a delegation chain (depth, ancestors' policies).
    pub(crate) lineage: Mutex<crate::delegate::Lineage>,
    /// Slots for subagents running at once.
    pub(crate) children: Arc<tokio::sync::Semaphore>,
    /// Token estimates of the session's messages (compaction decides from them).
    pub(crate) estimates: Mutex<crate::compaction::Estimates>,
    /// The estimate of the last request sent (the composer's context meter).
    pub(crate) last_context: Mutex<Option<mia_protocol::ContextUsage>>,
    /// When this state was last asked for (Unix ms): idle state is evicted.
    pub(crate) last_used: std::sync::atomic::AtomicI64,
}

impl SessionState {
    /// Nothing here that is not also in the store: it can be dropped and
    /// loaded again later without losing anything.
    fn evictable(&self, now: i64, idle_ms: i64) -> bool {
        now - self.last_used.load(std::sync::atomic::Ordering::Relaxed) >= idle_ms
            && lock(&self.running).is_none()
            && lock(&self.pending).is_empty()
            && lock(&self.session_rules)
                .values()
                .all(|r| r.rules().is_empty())
            && lock(&self.todos).items.is_empty()
            && lock(&self.queued_agent).is_none()
    }
}

/// What every session of one project in this process shares: one snapshot
/// repository handle and one file watcher (not one per session). Closed
/// again once no session of the project has been used for a while.
#[derive(Clone, Default)]
pub(crate) struct ProjectShared {
    pub(crate) snapshots: Arc<Mutex<Option<mia_snapshot::SnapshotRepo>>>,
    pub(crate) watcher: Arc<Mutex<Option<mia_snapshot::ProjectWatcher>>>,
}

/// What this process holds in memory (for diagnostics and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resident {
    /// Sessions with live state.
    pub sessions: usize,
    /// Projects with an open snapshot repository.
    pub open_repos: usize,
    /// Projects with a running file watcher.
    pub watchers: usize,
    /// Pooled provider clients.
    pub providers: usize,
}

impl Runtime {
    /// Drop the state of sessions idle for `idle_eviction` that hold nothing
    /// the store does not (no turn, no ask, no session rules, no todos), and
    /// close the snapshot repository and watcher of projects none of whose
    /// sessions is left. Runs at most once a minute (or once per
    /// `idle_eviction` when that is shorter). A second operation on an
    /// evicted session's old state is still kept out by its store claim.
    pub(crate) fn evict_idle(&self, now: i64) {
        let idle_ms = i64::try_from(self.inner.opts.idle_eviction.as_millis()).unwrap_or(i64::MAX);
        let every = idle_ms.min(60_000);
        let last = self
            .inner
            .last_sweep
            .load(std::sync::atomic::Ordering::Relaxed);
        if now - last < every
            || self
                .inner
                .last_sweep
                .compare_exchange(
                    last,
                    now,
                    std::sync::atomic::Ordering::Relaxed,
                    std::sync::atomic::Ordering::Relaxed,
                )
                .is_err()
        {
            return;
        }
        let live_dirs: std::collections::HashSet<PathBuf> = {
            let mut sessions = lock(&self.inner.sessions);
            sessions.retain(|_, s| !s.evictable(now, idle_ms));
            sessions.values().map(|s| s.directory.clone()).collect()
        };
        let mut projects = lock(&self.inner.projects);
        projects.retain(|dir, shared| {
            if live_dirs.contains(dir) {
                return true;
            }
            // Closed only when nobody is using the handle right now.
            let closed = match (shared.snapshots.try_lock(), shared.watcher.try_lock()) {
                (Ok(mut repo), Ok(mut watcher)) => {
                    *repo = None;
                    *watcher = None;
                    true
                }
                _ => false,
            };
            !closed
        });
    }

    /// What this process holds in memory now.
    pub fn resident(&self) -> Resident {
        let projects = lock(&self.inner.projects);
        Resident {
            sessions: lock(&self.inner.sessions).len(),
            open_repos: projects
                .values()
                .filter(|p| lock(&p.snapshots).is_some())
                .count(),
            watchers: projects
                .values()
                .filter(|p| lock(&p.watcher).is_some())
                .count(),
            providers: lock(&self.inner.providers).len(),
        }
    }

    /// The live state of a session this process has opened, if any.
    pub(crate) fn loaded_state(&self, id: SessionId) -> Option<Arc<SessionState>> {
        lock(&self.inner.sessions).get(&id).cloned()
    }

    pub(crate) async fn state(&self, id: SessionId) -> Result<Arc<SessionState>, CoreError> {
        let now = mia_protocol::now_ms();
        self.evict_idle(now);
        if let Some(s) = lock(&self.inner.sessions).get(&id) {
            s.last_used.store(now, std::sync::atomic::Ordering::Relaxed);
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
            session_rules: Mutex::new(HashMap::new()),
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
            estimates: Mutex::default(),
            last_context: Mutex::new(None),
            lineage: Mutex::default(),
            children: Arc::new(tokio::sync::Semaphore::new(crate::delegate::MAX_CONCURRENT)),
            last_used: std::sync::atomic::AtomicI64::new(now),
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
