//! Sessions in this process: their live state, the resources the sessions
//! of one project share, and the store writes ops make.

pub(crate) mod claim;
mod ops;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use mia_permission::{PermissionRule, SessionRules};
use mia_protocol::{Event, Message, MessageId, NewMessage, PartContent, Session, SessionId};
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::dispatch::PendingAsk;
use crate::runtime::{Runtime, lock};

/// A live session: the one owner of its state in this process.
///
/// Everything that changes lives in [`Live`], behind the session's one
/// lock, private to this module: other rooms reach it only through
/// [`SessionState::with`], whose closure cannot await, so the lock is
/// never held across a suspension point and there is no lock order to get
/// wrong. The second lock is the todo list's, because the `todo` tool
/// (mia-tools) updates it while it runs. The project's snapshot
/// repository and watcher are the project's, shared by its sessions
/// ([`ProjectShared`]), not this session's.
///
/// Why not a task that owns the state and answers messages: every access
/// is a few field reads or writes; a task would add a context switch to
/// each on the step path and give no guarantee a private lock taken only
/// in short closures does not already give (one order, one owner).
pub(crate) struct SessionState {
    pub(crate) id: SessionId,
    pub(crate) directory: PathBuf,
    /// Lock 1: what changes (see [`Live`]).
    live: Mutex<Live>,
    /// Lock 2: the todo list, shared with the `todo` tool while it runs.
    pub(crate) todos: Arc<Mutex<mia_tools::TodoList>>,
    /// The project's snapshot repository and watcher.
    pub(crate) project: ProjectShared,
    /// Where the session sits in a delegation chain (depth, ancestors'
    /// policies), set once: when the subagent's session is created, or
    /// rebuilt from the store before its first step. Unset: a session the
    /// user started.
    lineage: OnceLock<crate::delegate::Lineage>,
    /// File-changing steps recorded in this process (retention runs after turns that added some).
    pub(crate) steps_taken: AtomicUsize,
    /// The session's baseline snapshot is known to exist.
    pub(crate) has_baseline: AtomicBool,
    /// Slots for subagents running at once.
    pub(crate) children: Arc<tokio::sync::Semaphore>,
    /// When this state was last asked for (Unix ms): idle state is evicted.
    pub(crate) last_used: AtomicI64,
}

/// What changes in a live session.
pub(crate) struct Live {
    /// The stored session, as last written.
    pub(crate) session: Session,
    /// "Always"/"never" answers for the session, per agent: an answer
    /// given to one agent never applies to another.
    pub(crate) session_rules: HashMap<String, SessionRules>,
    /// Pending asks by request id.
    pub(crate) pending: HashMap<String, PendingAsk>,
    /// The running turn (or other owner), to stop it.
    pub(crate) running: Option<CancellationToken>,
    /// The store claim held while `running` is set.
    pub(crate) claim: Option<crate::session::claim::Held>,
    /// An agent switch asked for during a turn, done when it ends.
    pub(crate) queued_agent: Option<String>,
    /// Project approvals answered during the running turn, with the agent asked.
    pub(crate) new_approvals: Vec<(String, PermissionRule)>,
    /// Token estimates of the session's messages (compaction decides from them).
    pub(crate) estimates: crate::compaction::Estimates,
    /// The estimate of the last request sent (the composer's context meter).
    pub(crate) last_context: Option<mia_protocol::ContextUsage>,
    /// `SessionStart` hooks ran for the session in this process.
    pub(crate) started: bool,
    /// An editor's buffers the session's file tools go through (ACP).
    pub(crate) editor: Option<mia_tools::EditorFiles>,
}

/// A session the user started: no ancestors.
static ROOT_LINEAGE: crate::delegate::Lineage = crate::delegate::Lineage {
    depth: 0,
    ancestors: Vec::new(),
    agents: Vec::new(),
    root: None,
};

impl SessionState {
    fn new(session: Session, directory: PathBuf, project: ProjectShared, now: i64) -> Self {
        Self {
            id: session.id,
            directory,
            live: Mutex::new(Live {
                session,
                session_rules: HashMap::new(),
                pending: HashMap::new(),
                running: None,
                claim: None,
                queued_agent: None,
                new_approvals: Vec::new(),
                started: false,
                editor: None,
                estimates: crate::compaction::Estimates::default(),
                last_context: None,
            }),
            todos: Arc::default(),
            project,
            lineage: OnceLock::new(),
            steps_taken: AtomicUsize::new(0),
            has_baseline: AtomicBool::new(false),
            children: Arc::new(tokio::sync::Semaphore::new(crate::delegate::MAX_CONCURRENT)),
            last_used: AtomicI64::new(now),
        }
    }

    /// Read or change the live state. The closure cannot await: the lock
    /// is held only for it.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Live) -> R) -> R {
        f(&mut lock(&self.live))
    }

    /// The stored session, as last written.
    pub(crate) fn session(&self) -> Session {
        self.with(|l| l.session.clone())
    }

    /// The editor the session's file tools go through, if one is attached.
    pub(crate) fn editor(&self) -> Option<mia_tools::EditorFiles> {
        self.with(|l| l.editor.clone())
    }

    /// Keep `session` as the session's latest stored form.
    pub(crate) fn set_session(&self, session: Session) {
        self.with(|l| l.session = session);
    }

    /// The asks waiting for an answer.
    pub(crate) fn pending_requests(&self) -> Vec<mia_protocol::PermissionRequest> {
        self.with(|l| l.pending.values().map(|(r, _)| r.clone()).collect())
    }

    /// Where the session sits in a delegation chain.
    pub(crate) fn lineage(&self) -> &crate::delegate::Lineage {
        self.lineage.get().unwrap_or(&ROOT_LINEAGE)
    }

    /// Set the delegation chain once; a later call changes nothing.
    pub(crate) fn set_lineage(&self, lineage: crate::delegate::Lineage) {
        let _ = self.lineage.set(lineage);
    }

    /// Nothing here that is not also in the store: it can be dropped and
    /// loaded again later without losing anything.
    fn evictable(&self, now: i64, idle_ms: i64) -> bool {
        now - self.last_used.load(Ordering::Relaxed) >= idle_ms
            && self.with(|l| {
                l.running.is_none()
                    && l.pending.is_empty()
                    && l.session_rules.values().all(|r| r.rules().is_empty())
                    && l.queued_agent.is_none()
            })
            && lock(&self.todos).items.is_empty()
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
        let state = Arc::new(SessionState::new(session, directory, shared, now));
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
        let id = state.id;
        let session = self
            .inner
            .store
            .call(move |db| db.update_session(&id, patch))
            .await?;
        state.set_session(session.clone());
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
