use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mia_config::{Config, Paths};
use mia_permission::{
    Answerer, Checker, PathContext, PermissionAction, PermissionRule, SessionRules,
};
use mia_protocol::{
    Event, FileChange, HistoryAction, Message, MessageId, MessageMetadata, NewMessage, Op,
    PartContent, PermissionReplyKind, Role, Session, SessionId, TokenUsage, TurnEnd,
};
use mia_providers::credentials::Credentials;
use mia_providers::{ChatRequest, ClientOptions, ModelRef, StreamEvent, ToolDefinition};
use mia_store::NewSession;
use mia_tools::{ToolContext, ToolRegistry};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::agents::Agents;
use crate::{CoreError, StoreHandle, permissions, prompt};

/// How text deltas are batched into Events (UIs repaint at ~60 Hz).
const DELTA_BATCH: Duration = Duration::from_millis(25);
/// The same tool call with identical arguments this many times in a row is a doom loop.
const DOOM_LOOP: usize = 3;

/// How the runtime is set up.
#[derive(Clone)]
pub struct RuntimeOptions {
    pub paths: Paths,
    /// Whether a person can answer permission asks. When false, an ask that
    /// no rule settles is denied and the reason says so.
    pub interactive: bool,
    /// Extra allow rules for every session (`mia-code run --allow`).
    pub allow: Vec<PermissionRule>,
    /// Provider client options (timeouts, retries).
    pub client: ClientOptions,
    pub credentials: Arc<Credentials>,
    /// Add the 🧠/🌸 commentary instructions to primary agents (overrides config when set).
    pub unifier: Option<bool>,
}

impl RuntimeOptions {
    pub fn new(paths: Paths) -> Self {
        Self {
            paths,
            interactive: true,
            allow: Vec::new(),
            client: ClientOptions::default(),
            credentials: Arc::new(Credentials::system()),
            unifier: None,
        }
    }
}

/// What an Op returned right away (its effects arrive as Events).
#[derive(Debug, Clone, PartialEq)]
pub enum OpResult {
    Done,
    Session(Session),
    Reverted(mia_protocol::RevertSummary),
}

/// Per-session state shared by the actor's ops and the running turn.
pub(crate) struct SessionState {
    pub(crate) session: Mutex<Session>,
    pub(crate) directory: PathBuf,
    session_rules: Mutex<SessionRules>,
    /// Pending asks by request id.
    pub(crate) pending: Mutex<HashMap<String, PendingAsk>>,
    pub(crate) running: Mutex<Option<CancellationToken>>,
    /// The store claim held while `running` is set.
    pub(crate) claim: Mutex<Option<crate::claim::Held>>,
    pub(crate) queued_agent: Mutex<Option<String>>,
    todos: Arc<Mutex<mia_tools::TodoList>>,
    pub(crate) snapshots: Arc<Mutex<Option<mia_snapshot::SnapshotRepo>>>,
    /// Watches the project once the repo is open; narrows bash captures to
    /// what changed (a scan when it cannot tell).
    watcher: Arc<Mutex<Option<mia_snapshot::ProjectWatcher>>>,
    /// File-changing steps recorded in this process (retention runs after turns that added some).
    steps_taken: std::sync::atomic::AtomicUsize,
    /// The session's baseline snapshot is known to exist.
    has_baseline: std::sync::atomic::AtomicBool,
    /// "Always for this project" rules granted during the running turn.
    new_approvals: Mutex<Vec<PermissionRule>>,
}

/// What every session of one project in this process shares: one snapshot
/// repository handle and one file watcher (not one per session).
#[derive(Clone, Default)]
struct ProjectShared {
    snapshots: Arc<Mutex<Option<mia_snapshot::SnapshotRepo>>>,
    watcher: Arc<Mutex<Option<mia_snapshot::ProjectWatcher>>>,
}

struct Inner {
    opts: RuntimeOptions,
    store: StoreHandle,
    events: broadcast::Sender<Event>,
    sessions: Mutex<HashMap<SessionId, Arc<SessionState>>>,
    projects: Mutex<HashMap<PathBuf, ProjectShared>>,
    tools: ToolRegistry,
}

/// The runtime. Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Runtime {
    pub fn new(opts: RuntimeOptions, store: StoreHandle) -> Self {
        let (events, _) = broadcast::channel(8192);
        let rt = Self {
            inner: Arc::new(Inner {
                opts,
                store,
                events,
                sessions: Mutex::new(HashMap::new()),
                projects: Mutex::new(HashMap::new()),
                tools: ToolRegistry::builtin(),
            }),
        };
        rt.recover_dead_claims();
        rt
    }

    /// Every Event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    pub fn store(&self) -> &StoreHandle {
        &self.inner.store
    }

    pub fn options(&self) -> &RuntimeOptions {
        &self.inner.opts
    }

    /// Apply an Op. Turns run in the background; their Events follow.
    pub async fn submit(&self, op: Op) -> Result<OpResult, CoreError> {
        match op {
            Op::CreateSession {
                directory,
                title,
                agent,
                model,
            } => {
                let dir = PathBuf::from(&directory);
                let dir = dir.canonicalize().map_err(|e| {
                    CoreError::Setup(format!(
                        "project directory {directory} is not accessible: {e}"
                    ))
                })?;
                if let Some(m) = &model {
                    m.parse::<ModelRef>()
                        .map_err(|_| CoreError::BadModel(m.clone()))?;
                }
                let config = Config::load(&self.inner.opts.paths, Some(&dir))?;
                let agent = agent.unwrap_or_else(|| config.default_agent().to_string());
                Agents::from_config(&config).get(&agent)?;
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
            Op::UserMessage {
                session_id,
                text,
                agent,
                model,
            } => {
                let state = self.state(session_id).await?;
                let cancel = self.claim(&state, "turn").await?;
                let rt = self.clone();
                tokio::spawn(async move {
                    rt.turn(state, text, agent, model, cancel).await;
                });
                Ok(OpResult::Done)
            }
            Op::PermissionReply {
                session_id,
                request_id,
                reply,
            } => {
                let state = self.state(session_id).await?;
                let mut pending = lock(&state.pending);
                let Some((request, _)) = pending.get(&request_id) else {
                    return Err(CoreError::NoSuchRequest(request_id));
                };
                let offered = &request.options;
                let kind = reply_name(&reply);
                if !offered.iter().any(|o| o == kind) {
                    // Not consumed: the ask still waits for a valid answer.
                    return Err(CoreError::Setup(format!(
                        "`{kind}` is not offered for this request (offered: {}); an \"always\" answer is not offered for commands with expansions or dangerous parts",
                        offered.join(", ")
                    )));
                }
                if let Some((_, tx)) = pending.remove(&request_id) {
                    let _ = tx.send(reply);
                }
                Ok(OpResult::Done)
            }
            Op::Cancel { session_id } => {
                let state = self.state(session_id).await?;
                if let Some(token) = lock(&state.running).as_ref() {
                    token.cancel();
                }
                Ok(OpResult::Done)
            }
            Op::Undo {
                session_id,
                step,
                force,
            } => self
                .revert(session_id, HistoryAction::Undo { step }, force)
                .await
                .map(OpResult::Reverted),
            Op::UpdateSession {
                session_id,
                title,
                archived,
            } => {
                let state = self.state(session_id).await?;
                let mut patch = mia_store::SessionPatch::default();
                if let Some(t) = title {
                    let t = t.trim().to_string();
                    if t.is_empty() {
                        return Err(CoreError::Setup("a session title cannot be empty".into()));
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
                    *lock(&state.session) = session.clone();
                }
                self.emit(Event::SessionUpdated {
                    session: session.clone(),
                });
                Ok(OpResult::Session(session))
            }
            Op::DeleteSession { session_id } => {
                // Claim the session like a turn does, so no turn (here or
                // in another process) can start while it is deleted.
                let state = self.state(session_id).await?;
                self.claim(&state, "delete").await?;
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
                Ok(OpResult::Done)
            }
            Op::Revert {
                session_id,
                message_id,
                force,
            } => self
                .revert(
                    session_id,
                    HistoryAction::Revert {
                        message_id: message_id.to_string(),
                    },
                    force,
                )
                .await
                .map(OpResult::Reverted),
            Op::Redo { session_id, force } => self
                .revert(session_id, HistoryAction::Redo, force)
                .await
                .map(OpResult::Reverted),
            Op::SwitchAgent { session_id, agent } => {
                let state = self.state(session_id).await?;
                let config = Config::load(&self.inner.opts.paths, Some(&state.directory))?;
                let agents = Agents::from_config(&config);
                let def = agents.get(&agent)?;
                if !def.is_primary() {
                    return Err(CoreError::Setup(format!(
                        "{agent} is a subagent; switch to a primary agent ({})",
                        agents
                            .primary()
                            .iter()
                            .map(|a| a.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                let from = lock(&state.session).agent.clone().unwrap_or_default();
                let running = lock(&state.running).is_some();
                if running {
                    *lock(&state.queued_agent) = Some(agent.clone());
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
    }

    pub(crate) fn emit(&self, event: Event) {
        let _ = self.inner.events.send(event);
    }

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

    async fn set_agent(&self, state: &SessionState, agent: &str) -> Result<(), CoreError> {
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

    /// A deleted session's snapshots: drop the refs it owned (the trees go
    /// at the next gc unless another session or capture keeps them).
    async fn release_session_snapshots(&self, state: &Arc<SessionState>) {
        let session_id = lock(&state.session).id;
        let Ok(config) = Config::load(&self.inner.opts.paths, Some(&state.directory)) else {
            return;
        };
        let cfg = snapshot_config(&config, &self.inner.opts.paths)
            .unwrap_or_else(|| store_config(&self.inner.opts.paths));
        let dir = state.directory.clone();
        let done = tokio::task::spawn_blocking(move || {
            let repo = mia_snapshot::SnapshotRepo::open(&dir, cfg)?;
            repo.release_session(&session_id.to_string())
        })
        .await;
        if let Ok(Err(e)) = done {
            tracing::warn!(session = %session_id, error = %e, "could not release a deleted session's snapshots");
        }
    }

    /// Snapshot retention for the session that just grew, while the turn
    /// still holds the session (so none of its captures can race the refs
    /// it drops): prune its index in SQL, drop its refs to what it no longer
    /// needs, and start `git gc` in the background only when the store is
    /// past its thresholds.
    async fn retain(&self, state: &Arc<SessionState>) {
        let session_id = lock(&state.session).id;
        let Ok(config) = Config::load(&self.inner.opts.paths, Some(&state.directory)) else {
            return;
        };
        let Some(snapshot_config) = snapshot_config(&config, &self.inner.opts.paths) else {
            return;
        };
        let keep = snapshot_config.keep_per_session;
        let pruned = match self
            .inner
            .store
            .call(move |db| db.prune_session_snapshots(&session_id, keep))
            .await
        {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(session = %session_id, error = %e, "snapshot retention failed");
                return;
            }
        };
        let repo = state.snapshots.clone();
        let dir = state.directory.clone();
        let removed = pruned.removed;
        let result = tokio::task::spawn_blocking(move || {
            let guard = lock(&repo);
            let Some(repo) = guard.as_ref() else {
                return Ok::<_, mia_snapshot::SnapshotError>((0, None));
            };
            let released = if pruned.released.is_empty() {
                0
            } else {
                repo.release(&session_id.to_string(), &pruned.released, &pruned.unused)?
            };
            Ok((released, repo.gc_due()))
        })
        .await;
        match result {
            Ok(Ok((released, due))) => {
                if removed > 0 {
                    tracing::info!(session = %session_id, pruned = removed, released, "snapshot retention");
                }
                if let Some(why) = due {
                    tracing::info!(project = %dir.display(), %why, "snapshot gc in the background");
                    drop(mia_snapshot::gc_in_background(dir, snapshot_config));
                }
            }
            Ok(Err(e)) => {
                tracing::warn!(session = %session_id, error = %e, "snapshot retention failed")
            }
            Err(e) => {
                tracing::warn!(session = %session_id, error = %e, "snapshot retention failed")
            }
        }
    }

    /// Update the stored session and the cached copy.
    async fn patch_session(
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

    async fn turn(
        &self,
        state: Arc<SessionState>,
        text: String,
        agent: Option<String>,
        model: Option<String>,
        cancel: CancellationToken,
    ) {
        let session_id = lock(&state.session).id;
        let steps_before = state.steps_taken.load(std::sync::atomic::Ordering::Relaxed);
        let mut totals = TurnTotals::default();
        let end = match self
            .run_turn(&state, text, agent, model, &cancel, &mut totals)
            .await
        {
            Ok(end) => end,
            Err(e) => {
                tracing::warn!(session = %session_id, error = %e, "turn failed");
                self.emit(Event::Error {
                    session_id: Some(session_id),
                    kind: "setup".into(),
                    message: e.to_string(),
                    retryable: false,
                });
                TurnEnd::Error
            }
        };
        lock(&state.pending).clear();
        // Settle the session before another turn may start.
        if let Err(e) = self
            .set_status(&state, mia_protocol::SessionStatus::Idle)
            .await
        {
            tracing::warn!(session = %session_id, error = %e, "could not mark the session idle");
        }
        let queued = lock(&state.queued_agent).take();
        if let Some(next) = queued
            && let Err(e) = self.set_agent(&state, &next).await
        {
            tracing::warn!(session = %session_id, error = %e, "queued agent switch failed");
        }
        if state.steps_taken.load(std::sync::atomic::Ordering::Relaxed) > steps_before {
            self.retain(&state).await;
        }
        self.release(&state).await;
        self.emit(Event::TurnFinished {
            session_id,
            end,
            steps: totals.steps,
            usage: totals.usage,
            cost_usd: totals.cost,
        });
    }

    async fn set_status(
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

    async fn add_message(
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

    async fn append(
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

    #[allow(clippy::too_many_lines)]
    async fn run_turn(
        &self,
        state: &Arc<SessionState>,
        text: String,
        agent_override: Option<String>,
        model_override: Option<String>,
        cancel: &CancellationToken,
        totals: &mut TurnTotals,
    ) -> Result<TurnEnd, CoreError> {
        let opts = &self.inner.opts;
        let session_id = lock(&state.session).id;
        // A session without a title is named after its first message.
        let new_title = lock(&state.session)
            .title
            .trim()
            .is_empty()
            .then(|| title_from(&text))
            .filter(|t| !t.is_empty());
        let config = Config::load(&opts.paths, Some(&state.directory))?;
        let agents = Agents::from_config(&config);
        if let Some(a) = &agent_override {
            agents.get(a)?;
            self.set_agent(state, a).await?;
        }
        let session = lock(&state.session).clone();
        let agent_name = session
            .agent
            .clone()
            .unwrap_or_else(|| config.default_agent().to_string());
        let agent = agents.get(&agent_name)?.clone();
        let model_text = model_override
            .or_else(|| agent.model.clone())
            .or_else(|| session.model.clone())
            .or_else(|| config.merged.model.clone())
            .ok_or(CoreError::NoModel)?;
        let model: ModelRef = model_text
            .parse()
            .map_err(|_| CoreError::BadModel(model_text.clone()))?;

        // Tell the model when build takes over from plan (spec 014): compare
        // with the agent of the previous user message, as stored.
        let previous = self
            .inner
            .store
            .call(move |db| {
                db.get_messages(
                    &session_id,
                    &mia_store::MessageQuery {
                        limit: Some(50),
                        tail: true,
                        ..Default::default()
                    },
                )
            })
            .await?
            .into_iter()
            .rev()
            .find(|m| m.role == Role::User)
            .and_then(|m| m.metadata.agent);
        let mut user_parts = vec![PartContent::text(text)];
        if previous.as_deref() == Some("plan") && agent_name != "plan" {
            user_parts.push(PartContent::Text {
                text: format!(
                    "[The user switched from plan mode to {agent_name} mode: you may now make changes.]"
                ),
                synthetic: true,
            });
        }

        self.add_message(
            session_id,
            NewMessage {
                role: Some(Role::User),
                metadata: MessageMetadata {
                    agent: Some(agent_name.clone()),
                    model: Some(model.to_string()),
                    ..Default::default()
                },
                parts: user_parts,
                ..Default::default()
            },
        )
        .await?;
        let session = self
            .patch_session(
                state,
                mia_store::SessionPatch {
                    status: Some(mia_protocol::SessionStatus::Busy),
                    title: new_title,
                    ..Default::default()
                },
            )
            .await?;
        self.emit(Event::SessionUpdated { session });

        // The credential chain may ask the OS keychain, which blocks.
        let entry = config
            .merged
            .providers
            .as_ref()
            .and_then(|p| p.get(&model.provider_id))
            .cloned();
        let resolved = {
            let provider_id = model.provider_id.clone();
            let credentials = opts.credentials.clone();
            let client = opts.client.clone();
            tokio::task::spawn_blocking(move || {
                mia_providers::settings::resolve_provider(
                    &provider_id,
                    entry.as_ref(),
                    &credentials,
                    client,
                )
            })
            .await
            .map_err(|e| CoreError::Internal(format!("credential lookup failed: {e}")))?
            .map_err(|e| CoreError::Setup(e.to_string()))?
        };
        let provider = mia_providers::build_provider(resolved.config)
            .map_err(|e| CoreError::Setup(e.to_string()))?;
        let catalog = mia_providers::catalog::builtin();
        let wire_model = catalog.wire_id(&model.provider_id, &model.model_id);

        let home = opts.paths.user_home.clone();
        let path_ctx = PathContext::new(&state.directory, Some(home.clone()))
            .map_err(|e| CoreError::Setup(e.to_string()))?;
        let answerer = if opts.interactive {
            Answerer::Person
        } else {
            Answerer::Headless
        };

        let tool_ctx = ToolContext {
            project_root: path_ctx.root.clone(),
            cancel: cancel.clone(),
            todos: state.todos.clone(),
            extra_env: Vec::new(),
        };

        // "Always for this project" approvals and workspace trust (persisted).
        let project_key = path_ctx.root.display().to_string();
        let (approvals, trusted) = {
            let key = project_key.clone();
            self.inner
                .store
                .call(move |db| {
                    Ok((
                        db.project_approval_rules(&key)?,
                        db.is_workspace_trusted(&key)?,
                    ))
                })
                .await?
        };
        let mut approvals = approvals;
        let snapshot_config = snapshot_config(&config, &opts.paths);
        let mut policy_cache: Option<(Vec<PermissionRule>, mia_permission::Policy)> = None;
        let mut recent_calls: Vec<(String, String)> = Vec::new();
        let mut step = 0u32;
        loop {
            if step >= agent.steps {
                self.emit(Event::Error {
                    session_id: Some(session_id),
                    kind: "step_limit".into(),
                    message: format!(
                        "the {agent_name} agent reached its limit of {} steps in one turn; send another message to continue",
                        agent.steps
                    ),
                    retryable: false,
                });
                return Ok(TurnEnd::StepLimit);
            }
            step += 1;
            totals.steps = step;

            // Recompile the policy only when the session's rules changed
            // (an "always"/"never" answer); compiling costs milliseconds.
            let mut session_rules: Vec<PermissionRule> =
                lock(&state.session_rules).rules().to_vec();
            session_rules.extend(opts.allow.iter().cloned());
            let approvals_now = lock(&state.new_approvals).clone();
            if !approvals_now.is_empty() {
                approvals.extend(approvals_now);
                lock(&state.new_approvals).clear();
                policy_cache = None;
            }
            if policy_cache
                .as_ref()
                .is_none_or(|(rules, _)| *rules != session_rules)
            {
                let mut input = permissions::policy_input(
                    &config,
                    &agent_name,
                    session_rules.clone(),
                    approvals.clone(),
                    trusted,
                    Some(home.display().to_string()),
                );
                permissions::protect_mia_home(&mut input, &opts.paths.home);
                policy_cache = Some((session_rules, mia_permission::Policy::compile(&input)));
            }
            let Some((_, policy)) = policy_cache.as_ref() else {
                return Err(CoreError::Internal("no permission policy".into()));
            };
            let checker = Checker::new(policy, &path_ctx).with_answerer(answerer);
            let (tools, permission_summary) = {
                let tools: Vec<ToolDefinition> = self
                    .inner
                    .tools
                    .specs()
                    .into_iter()
                    .filter(|s| {
                        let perm = if s.name == "todo" {
                            "todo_create"
                        } else {
                            s.name
                        };
                        permissions::tool_offered(&checker, perm)
                    })
                    .map(|s| ToolDefinition {
                        name: s.name.to_string(),
                        description: s.description.to_string(),
                        input_schema: s.input_schema,
                    })
                    .collect();
                (tools, permissions::summary(&checker))
            };
            let tool_lines = tools
                .iter()
                .map(|t| format!("- {}: {}", t.name, t.description))
                .collect::<Vec<_>>()
                .join("\n");
            let unifier = opts.unifier.unwrap_or_else(|| {
                config
                    .merged
                    .unifier
                    .as_ref()
                    .and_then(|u| u.enabled)
                    .unwrap_or(true)
            });
            let (system, warnings) = prompt::assemble(&prompt::PromptInputs {
                agent: &agent,
                project_root: &path_ctx.root,
                session_id: session_id.to_string(),
                datetime: now_iso(),
                tools: tool_lines,
                permissions: permission_summary,
                unifier,
            });
            for w in warnings {
                tracing::warn!(session = %session_id, "{w}");
            }

            let messages = self
                .inner
                .store
                .call(move |db| db.get_messages(&session_id, &mia_store::MessageQuery::default()))
                .await?;
            let mut request = ChatRequest::new(
                wire_model.clone(),
                mia_providers::convert::history_to_messages(&messages),
            );
            request.system = system;
            request.tools = tools;
            request.temperature = agent.temperature.map(|t| t as f32);

            // The id exists from the first delta; the message is stored when
            // its stream ends (one commit), partial output included.
            let message_id = MessageId::new();
            self.emit(Event::StepStarted {
                session_id,
                message_id,
                agent: agent_name.clone(),
                model: model.to_string(),
            });

            let started = Instant::now();
            let mut completion = mia_providers::Completion::default();
            let mut stream = provider.stream(request, cancel.clone());
            let mut batch = DeltaBatch::new(session_id, message_id);
            let mut failure: Option<mia_providers::ProviderError> = None;
            loop {
                // Flush batched deltas on time even when the stream pauses.
                let item = match batch.deadline() {
                    None => stream.next().await,
                    Some(deadline) => tokio::select! {
                        item = stream.next() => item,
                        () = tokio::time::sleep_until(deadline.into()) => {
                            batch.flush(|e| self.emit(e));
                            continue;
                        }
                    },
                };
                let Some(item) = item else { break };
                match item {
                    Ok(event) => {
                        completion.apply(&event);
                        match &event {
                            StreamEvent::TextDelta { text } => {
                                batch.push(false, text, |e| self.emit(e));
                            }
                            StreamEvent::ReasoningDelta { text, .. } => {
                                batch.push(true, text, |e| self.emit(e));
                            }
                            StreamEvent::Retrying {
                                attempt,
                                delay_ms,
                                reason,
                            } => self.emit(Event::Retrying {
                                session_id,
                                attempt: *attempt,
                                delay_ms: *delay_ms,
                                reason: reason.clone(),
                            }),
                            _ => {}
                        }
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            batch.flush(|e| self.emit(e));

            // Record what arrived, even when the stream failed or was cancelled.
            let calls = if failure.is_none() {
                completion.tool_calls.clone()
            } else {
                Vec::new()
            };
            // Reasoning, text (🧠/🌸 lines split into commentary parts) and
            // the calls that will run; a call cut off by a failure is dropped.
            let mut parts = Vec::new();
            for part in mia_providers::convert::completion_parts(&completion) {
                match part {
                    PartContent::Text { text, .. } => {
                        let (body, notes) = crate::unifier::split_commentary(&text);
                        if !body.trim().is_empty() {
                            parts.push(PartContent::text(body));
                        }
                        for (perspective, text) in notes {
                            parts.push(PartContent::Commentary { perspective, text });
                        }
                    }
                    PartContent::ToolCall { .. } if failure.is_some() => {}
                    other => parts.push(other),
                }
            }
            let cancelled = cancel.is_cancelled()
                || matches!(failure, Some(mia_providers::ProviderError::Cancelled));
            if let Some(e) = &failure
                && !cancelled
            {
                parts.push(PartContent::Error {
                    kind: e.kind().to_string(),
                    message: e.to_string(),
                    retryable: e.is_retryable(),
                });
            }
            let usage = completion.usage.unwrap_or_default();
            totals.add(&usage, catalog.cost(&model, &usage));
            let metadata = MessageMetadata {
                agent: Some(agent_name.clone()),
                model: Some(model.to_string()),
                tokens: completion.usage,
                cost_usd: catalog.cost(&model, &usage),
                duration_ms: Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
                finish: Some(if cancelled {
                    "cancelled".to_string()
                } else if failure.is_some() {
                    "error".to_string()
                } else {
                    completion
                        .stop
                        .as_ref()
                        .map(|s| s.as_str().to_string())
                        .unwrap_or_else(|| "end_turn".into())
                }),
                ..Default::default()
            };
            {
                let meta = metadata.clone();
                let parts = parts.clone();
                let stored = self
                    .inner
                    .store
                    .call(move |db| {
                        db.add_message(
                            &session_id,
                            NewMessage {
                                id: Some(message_id),
                                role: Some(Role::Assistant),
                                metadata: meta,
                                parts,
                                ..Default::default()
                            },
                        )
                    })
                    .await?;
                // The stored form replaces the streamed draft in UIs.
                self.emit(Event::MessageStored { message: stored });
            }
            for call in &calls {
                self.emit(Event::ToolCall {
                    session_id,
                    message_id,
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    input: call.input.clone(),
                });
            }
            if cancelled {
                return Ok(TurnEnd::Cancelled);
            }
            if let Some(e) = failure {
                self.emit(Event::Error {
                    session_id: Some(session_id),
                    kind: e.kind().to_string(),
                    message: e.to_string(),
                    retryable: e.is_retryable(),
                });
                return Ok(TurnEnd::Error);
            }
            if calls.is_empty() {
                return Ok(TurnEnd::Completed);
            }

            for call in calls {
                if cancel.is_cancelled() {
                    return Ok(TurnEnd::Cancelled);
                }
                let key = (call.name.clone(), call.input.to_string());
                recent_calls.push(key.clone());
                let repeats = recent_calls.iter().rev().take_while(|k| **k == key).count();
                let doom_loop = repeats >= DOOM_LOOP;
                if doom_loop && !opts.interactive {
                    let msg = format!(
                        "Stopped: {} was called {repeats} times in a row with identical arguments",
                        call.name
                    );
                    self.record_result(session_id, message_id, &call, msg.clone(), true, 0)
                        .await?;
                    self.emit(Event::Error {
                        session_id: Some(session_id),
                        kind: "doom_loop".into(),
                        message: msg,
                        retryable: false,
                    });
                    return Ok(TurnEnd::Blocked);
                }
                let end = self
                    .run_tool(
                        state,
                        &checker,
                        &agent_name,
                        session_id,
                        message_id,
                        &call,
                        &tool_ctx,
                        doom_loop,
                        snapshot_config.as_ref(),
                    )
                    .await?;
                if let Some(end) = end {
                    return Ok(end);
                }
            }
        }
    }

    async fn record_result(
        &self,
        session_id: SessionId,
        message_id: MessageId,
        call: &mia_providers::ToolCall,
        output: String,
        is_error: bool,
        duration_ms: u64,
    ) -> Result<(), CoreError> {
        self.record_with(
            session_id,
            message_id,
            call,
            output,
            is_error,
            duration_ms,
            Vec::new(),
            None,
        )
        .await
    }

    /// A call that was not run: its denial goes back to the model as an error
    /// result, stored with how the permission was settled.
    async fn record_denied(
        &self,
        session_id: SessionId,
        message_id: MessageId,
        call: &mia_providers::ToolCall,
        msg: String,
        note: mia_protocol::PermissionNote,
    ) -> Result<(), CoreError> {
        self.record_with(
            session_id,
            message_id,
            call,
            msg,
            true,
            0,
            Vec::new(),
            Some(note),
        )
        .await
    }

    /// Store `before` (e.g. the snapshot part) and the tool result in one commit.
    #[allow(clippy::too_many_arguments)]
    async fn record_with(
        &self,
        session_id: SessionId,
        message_id: MessageId,
        call: &mia_providers::ToolCall,
        output: String,
        is_error: bool,
        duration_ms: u64,
        mut before: Vec<PartContent>,
        permission: Option<mia_protocol::PermissionNote>,
    ) -> Result<(), CoreError> {
        before.push(PartContent::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            output: output.clone(),
            is_error,
            duration_ms: Some(duration_ms),
            permission,
        });
        self.append(session_id, message_id, before).await?;
        self.emit(Event::ToolResult {
            session_id,
            message_id,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            output,
            is_error,
            duration_ms,
        });
        Ok(())
    }

    /// Permission → snapshot → run → record, for one call. `Some(end)` stops the turn.
    #[allow(clippy::too_many_arguments)]
    async fn run_tool(
        &self,
        state: &Arc<SessionState>,
        checker: &Checker<'_>,
        agent: &str,
        session_id: SessionId,
        message_id: MessageId,
        call: &mia_providers::ToolCall,
        ctx: &ToolContext,
        doom_loop: bool,
        snapshot_config: Option<&mia_snapshot::SnapshotConfig>,
    ) -> Result<Option<TurnEnd>, CoreError> {
        let registry = &self.inner.tools;
        let plan = match registry.plan(&call.name, &call.input, ctx) {
            Ok(p) => p,
            Err(e) => {
                self.record_result(session_id, message_id, call, e.to_string(), true, 0)
                    .await?;
                return Ok(None);
            }
        };

        // Permission: every target must be allowed; the strictest decides.
        let mut decisions: Vec<mia_permission::Decision> = plan
            .targets
            .iter()
            .map(|t| checker.check(&permissions::request_for(&plan.permission, t)))
            .collect();
        self.audit(session_id, agent, &decisions).await;
        decisions.sort_by_key(|d| std::cmp::Reverse(d.decision));
        let Some(decision) = decisions.into_iter().next() else {
            return Ok(None);
        };
        let mut needs_ask = decision.decision == PermissionAction::Ask;
        if decision.decision == PermissionAction::Allow && doom_loop {
            needs_ask = true;
        }
        if decision.decision == PermissionAction::Deny {
            let msg = decision
                .denial_message()
                .unwrap_or_else(|| "Permission denied".into());
            let by = if self.inner.opts.interactive {
                "rule"
            } else {
                "headless"
            };
            self.emit(Event::PermissionResolved {
                session_id,
                request_id: call.id.clone(),
                decision: "deny".into(),
                by: by.into(),
                reason: msg.clone(),
            });
            let note = mia_protocol::PermissionNote {
                decision: "deny".into(),
                by: by.into(),
                reply: None,
                reason: msg.clone(),
            };
            self.record_denied(session_id, message_id, call, msg, note)
                .await?;
            return Ok(None);
        }
        let mut permission_note = None;
        if needs_ask {
            let request_id = format!("perm-{}", mia_protocol::PartId::new());
            let mut request = permissions::dialog(
                request_id.clone(),
                session_id,
                agent,
                &call.name,
                &call.input,
                &decision,
            );
            request.call_id = Some(call.id.clone());
            if doom_loop {
                request.reason = format!(
                    "{} has been called {DOOM_LOOP} times in a row with the same arguments; it may be stuck in a loop",
                    call.name
                );
            }
            let (tx, rx) = oneshot::channel();
            lock(&state.pending).insert(request_id.clone(), (request.clone(), tx));
            self.emit(Event::PermissionAsked { request });
            let reply = tokio::select! {
                r = rx => r.ok(),
                () = ctx.cancel.cancelled() => None,
            };
            let Some(reply) = reply else {
                return Ok(Some(TurnEnd::Cancelled));
            };
            let outcome = if decision.decision == PermissionAction::Ask {
                mia_permission::apply_reply(&decision, permissions::engine_reply(&reply))
                    .map_err(|e| CoreError::Setup(e.to_string()))?
            } else {
                // A doom-loop confirmation of an allowed call.
                mia_permission::ReplyOutcome {
                    proceed: matches!(
                        reply,
                        PermissionReplyKind::Once
                            | PermissionReplyKind::Session
                            | PermissionReplyKind::Project
                    ),
                    message_to_model: match &reply {
                        PermissionReplyKind::RejectWithFeedback { feedback } => {
                            Some(feedback.clone())
                        }
                        _ => Some("The user stopped this repeated call.".into()),
                    },
                    ..Default::default()
                }
            };
            lock(&state.session_rules).add(&outcome.session_rules);
            if !outcome.project_rules.is_empty() {
                let rules = outcome.project_rules.clone();
                let project = state.directory.display().to_string();
                let session = session_id.to_string();
                self.inner
                    .store
                    .call(move |db| db.add_project_approvals(&project, &rules, Some(&session)))
                    .await?;
                lock(&state.new_approvals).extend(outcome.project_rules.iter().cloned());
            }
            let decided = if outcome.proceed { "allow" } else { "deny" };
            self.emit(Event::PermissionResolved {
                session_id,
                request_id,
                decision: decided.into(),
                by: "user".into(),
                reason: outcome.message_to_model.clone().unwrap_or_default(),
            });
            let note = mia_protocol::PermissionNote {
                decision: decided.into(),
                by: "user".into(),
                reply: Some(reply_name(&reply).to_string()),
                reason: match &reply {
                    PermissionReplyKind::RejectWithFeedback { feedback } => feedback.clone(),
                    _ => String::new(),
                },
            };
            if !outcome.proceed {
                let msg = outcome
                    .message_to_model
                    .unwrap_or_else(|| "Permission denied by the user".into());
                self.record_denied(session_id, message_id, call, msg, note)
                    .await?;
                return Ok(None);
            }
            permission_note = Some(note);
        }

        // Snapshot what the call may change. A shell command waits for
        // another one running on the same work tree (their changes could not
        // be told apart); past the wait, or on Stop, it does not run.
        let pending = match (&plan.modifies, snapshot_config) {
            (Some(paths), _) if paths.is_empty() => None,
            (_, None) => None,
            (modifies, Some(cfg)) => {
                let begin = self.begin_snapshot(
                    state,
                    session_id,
                    message_id,
                    &call.id,
                    modifies.clone(),
                    cfg.clone(),
                );
                let began = tokio::select! {
                    r = begin => r,
                    () = ctx.cancel.cancelled() => {
                        self.record_with(
                            session_id,
                            message_id,
                            call,
                            "Stopped before it ran.".into(),
                            true,
                            0,
                            Vec::new(),
                            permission_note,
                        )
                        .await?;
                        return Ok(Some(TurnEnd::Cancelled));
                    }
                };
                match began {
                    Err(SnapFail::Busy(msg)) => {
                        self.record_with(
                            session_id,
                            message_id,
                            call,
                            msg,
                            true,
                            0,
                            Vec::new(),
                            permission_note,
                        )
                        .await?;
                        return Ok(None);
                    }
                    Err(SnapFail::Unavailable(reason)) => Some(Err(reason)),
                    Ok(p) => Some(Ok(p)),
                }
            }
        };

        let started = Instant::now();
        let tool = registry.get(&call.name);
        let result = match tool {
            Some(t) => t.run(call.input.clone(), ctx).await,
            None => Err(mia_tools::ToolError::Invalid(format!(
                "unknown tool {}",
                call.name
            ))),
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (output, is_error) = match result {
            // A command stopped by a timeout or a cancel did not do its job: shown as failed.
            Ok(out) => {
                let stopped = out.metadata.get("cancelled") == Some(&serde_json::Value::Bool(true))
                    || out.metadata.get("timed_out") == Some(&serde_json::Value::Bool(true));
                (out.output, stopped)
            }
            Err(e) => (e.to_string(), true),
        };

        let mut parts = Vec::new();
        if let Some(pending) = pending {
            let (part, event) = self
                .finish_snapshot(state, session_id, &call.id, pending)
                .await;
            parts.push(part);
            self.emit(event);
        }
        self.record_with(
            session_id,
            message_id,
            call,
            output,
            is_error,
            duration_ms,
            parts,
            permission_note,
        )
        .await?;
        if ctx.cancel.is_cancelled() {
            return Ok(Some(TurnEnd::Cancelled));
        }
        Ok(None)
    }

    async fn begin_snapshot(
        &self,
        state: &Arc<SessionState>,
        session_id: SessionId,
        message_id: MessageId,
        call_id: &str,
        paths: Option<Vec<PathBuf>>,
        config: mia_snapshot::SnapshotConfig,
    ) -> Result<mia_snapshot::PendingStep, SnapFail> {
        // A session's first change is preceded by its baseline snapshot
        // (kept by retention for good), once per session across processes.
        let needs_baseline = !state
            .has_baseline
            .load(std::sync::atomic::Ordering::Relaxed)
            && !self
                .inner
                .store
                .call(move |db| db.snapshots(&session_id))
                .await
                .map_err(|e| SnapFail::Unavailable(e.to_string()))?
                .iter()
                .any(|s| s.snapshot.kind == mia_store::SnapshotKind::Baseline);
        if !needs_baseline {
            state
                .has_baseline
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // A shell step first waits for the work tree's step lock, without
        // holding the repository handle the project's sessions share.
        let step_lock = match &paths {
            Some(_) => None,
            None => {
                let dir = state.directory.clone();
                let cfg = config.clone();
                let holder = format!(
                    "session {session_id}, {} pid {}",
                    crate::claim::this_owner().name,
                    std::process::id()
                );
                Some(
                    tokio::task::spawn_blocking(move || {
                        mia_snapshot::acquire_step_lock(&dir, &cfg, &holder)
                    })
                    .await
                    .map_err(|e| SnapFail::Unavailable(e.to_string()))?
                    .map_err(|e| match e {
                        mia_snapshot::SnapshotError::StepBusy { .. } => {
                            SnapFail::Busy(e.to_string())
                        }
                        e => SnapFail::Unavailable(e.to_string()),
                    })?,
                )
            }
        };
        let repo = state.snapshots.clone();
        let dir = state.directory.clone();
        let ctx = mia_snapshot::CaptureContext {
            session_id: Some(session_id.to_string()),
            message_id: Some(message_id.to_string()),
            tool_call_id: Some(call_id.to_string()),
        };
        let watcher = state.watcher.clone();
        let (pending, baseline) = tokio::task::spawn_blocking(move || {
            let mut guard = lock(&repo);
            if guard.is_none() {
                let opened = mia_snapshot::SnapshotRepo::open(&dir, config)
                    .map_err(|e| SnapFail::Unavailable(e.to_string()))?;
                match mia_snapshot::ProjectWatcher::start(
                    opened.project(),
                    opened.config().excluded_dirs.clone(),
                ) {
                    Ok(w) => *lock(&watcher) = Some(w),
                    Err(e) => {
                        tracing::info!(error = %e, "no file watcher; bash steps scan the project")
                    }
                }
                *guard = Some(opened);
            }
            let repo = guard
                .as_mut()
                .ok_or_else(|| SnapFail::Unavailable("snapshot repository unavailable".into()))?;
            let baseline = if needs_baseline {
                // The baseline is a full scan: the watcher counts from it.
                if let Some(w) = lock(&watcher).as_ref() {
                    w.prime();
                }
                let base_ctx = mia_snapshot::CaptureContext {
                    session_id: ctx.session_id.clone(),
                    message_id: None,
                    tool_call_id: None,
                };
                match repo.capture(&base_ctx, None) {
                    Ok(snap) => Some(snap),
                    Err(e) => {
                        tracing::warn!(error = %e, "baseline snapshot unavailable");
                        None
                    }
                }
            } else {
                None
            };
            let w = lock(&watcher);
            let pending = match (step_lock, w.as_ref()) {
                (Some(held), w) => repo.begin_step_holding(ctx, held, w),
                (None, Some(w)) => repo.begin_step_with_watcher(ctx, paths.as_deref(), w),
                (None, None) => repo.begin_step(ctx, paths.as_deref()),
            }
            .map_err(|e| match e {
                mia_snapshot::SnapshotError::StepBusy { .. } => SnapFail::Busy(e.to_string()),
                e => SnapFail::Unavailable(e.to_string()),
            })?;
            Ok::<_, SnapFail>((pending, baseline))
        })
        .await
        .map_err(|e| SnapFail::Unavailable(e.to_string()))??;
        if let Some(snap) = baseline {
            state
                .has_baseline
                .store(true, std::sync::atomic::Ordering::Relaxed);
            let row = new_snapshot(session_id, &snap, mia_store::SnapshotKind::Baseline);
            if let Err(e) = self.inner.store.call(move |db| db.add_snapshot(&row)).await {
                tracing::warn!(session = %session_id, error = %e, "could not index the baseline snapshot");
            }
        }
        Ok(pending)
    }

    /// Every check is an audit record: a tracing event (deny/ask at warn,
    /// allow at debug) and a row in the store.
    async fn audit(
        &self,
        session_id: SessionId,
        agent: &str,
        decisions: &[mia_permission::Decision],
    ) {
        let now = mia_protocol::now_ms();
        let session = session_id.to_string();
        let rows: Vec<mia_store::PermissionAudit> = decisions
            .iter()
            .map(|d| {
                let r = mia_permission::AuditRecord::new(d, agent, Some(&session), now);
                r.emit();
                mia_store::PermissionAudit {
                    timestamp_ms: r.timestamp_ms,
                    session: r.session,
                    agent: r.agent,
                    permission: r.permission,
                    target: r.target,
                    matched_rule: r.matched_rule,
                    layer: r.layer,
                    source: r.source,
                    decision: r.decision,
                    reason: r.reason,
                }
            })
            .collect();
        if let Err(e) = self
            .inner
            .store
            .call(move |db| db.record_permission_checks(&rows))
            .await
        {
            tracing::warn!(session = %session_id, error = %e, "could not store permission audit rows");
        }
    }

    /// Snapshot after the tool ran; the part to store and the Event to emit.
    async fn finish_snapshot(
        &self,
        state: &Arc<SessionState>,
        session_id: SessionId,
        call_id: &str,
        pending: Result<mia_snapshot::PendingStep, String>,
    ) -> (PartContent, Event) {
        let (hash, files, unavailable) = match pending {
            Err(reason) => (None, Vec::new(), Some(reason)),
            Ok(pending) => {
                let before = pending.before.clone();
                let repo = state.snapshots.clone();
                let watcher = state.watcher.clone();
                let record = tokio::task::spawn_blocking(move || {
                    let mut guard = lock(&repo);
                    let repo = guard.as_mut().ok_or("snapshot repository unavailable")?;
                    match lock(&watcher).as_ref() {
                        Some(w) => repo.finish_step_with_watcher(pending, w),
                        None => repo.finish_step(pending),
                    }
                    .map_err(|e| e.to_string())
                })
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r);
                match record {
                    Ok(record) => {
                        let out = (Some(record.before.clone()), record.changes.clone(), None);
                        // The index undo/revert work from, across processes.
                        let snapshot =
                            new_snapshot(session_id, &before, mia_store::SnapshotKind::Step);
                        let step = new_step(session_id, &record);
                        let stored = self
                            .inner
                            .store
                            .call(move |db| {
                                db.add_snapshot(&snapshot)?;
                                if let Some(step) = step {
                                    db.add_snapshot_step(&step)?;
                                }
                                Ok(())
                            })
                            .await;
                        if let Err(e) = stored {
                            tracing::warn!(session = %session_id, error = %e, "could not index a snapshot step");
                        }
                        state
                            .steps_taken
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        out
                    }
                    Err(reason) => (None, Vec::new(), Some(reason)),
                }
            }
        };
        let files: Vec<FileChange> = files;
        if let Some(reason) = &unavailable {
            let row = mia_store::NewSnapshot {
                session_id,
                hash: String::new(),
                message_id: None,
                tool_call_id: Some(call_id.to_string()),
                kind: mia_store::SnapshotKind::Step,
                files: 0,
                excluded: serde_json::Value::Array(Vec::new()),
                excluded_total: 0,
                mode: String::new(),
                ms: 0,
                unavailable: Some(reason.clone()),
            };
            if let Err(e) = self.inner.store.call(move |db| db.add_snapshot(&row)).await {
                tracing::warn!(session = %session_id, error = %e, "could not index an unavailable snapshot");
            }
        }
        (
            PartContent::Snapshot {
                hash: hash.clone().unwrap_or_default(),
                tool_call_id: Some(call_id.to_string()),
                files: files.clone(),
                unavailable: unavailable.clone(),
            },
            Event::Snapshot {
                session_id,
                call_id: call_id.to_string(),
                hash,
                files,
                unavailable,
            },
        )
    }
}

/// The snapshot engine's settings from the `snapshot` config section;
/// `None` when snapshots are turned off.
pub(crate) fn snapshot_config(
    config: &Config,
    paths: &Paths,
) -> Option<mia_snapshot::SnapshotConfig> {
    let section = config.merged.snapshot.clone().unwrap_or_default();
    if section.enabled == Some(false) {
        return None;
    }
    let mut out = store_config(paths);
    if let Some(n) = section.max_file_size {
        out.max_file_size = n;
    }
    if let Some(ms) = section.capture_budget_ms {
        out.time_budget = std::time::Duration::from_millis(ms);
    }
    if let Some(n) = section.retention {
        out.keep_per_session = n as usize;
    }
    // Plain directory names join the built-in excluded directories.
    for pattern in section.exclude.iter().flatten() {
        let name = pattern.trim_matches('/');
        if !name.is_empty()
            && !name.contains(['*', '?', '[', '/'])
            && !out.excluded_dirs.iter().any(|d| d == name)
        {
            out.excluded_dirs.push(name.to_string());
        }
    }
    Some(out)
}

/// The snapshot engine's defaults with the store under `$MIA_CODE_HOME`.
pub fn store_config(paths: &Paths) -> mia_snapshot::SnapshotConfig {
    mia_snapshot::SnapshotConfig {
        store_root: Some(paths.home.join("snapshots")),
        ..mia_snapshot::SnapshotConfig::default()
    }
}

/// A session title from a first message: its first line, at most 60 characters.
fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title = title.trim_end().to_string();
        title.push('…');
    }
    title
}

/// Why a step's "before" snapshot was not taken.
#[derive(Debug)]
pub(crate) enum SnapFail {
    /// No snapshot (time budget, lock, I/O): the step runs without undo.
    Unavailable(String),
    /// Another step with unknown paths holds the work tree: this one must
    /// not run (its changes and the other's could not be told apart).
    Busy(String),
}

/// A permission ask waiting for its answer: the request (with the replies
/// offered) and where to send the one given.
pub(crate) type PendingAsk = (
    mia_protocol::PermissionRequest,
    oneshot::Sender<PermissionReplyKind>,
);

/// The option name of a reply, as offered in `PermissionRequest::options`.
fn reply_name(reply: &PermissionReplyKind) -> &'static str {
    match reply {
        PermissionReplyKind::Once => "once",
        PermissionReplyKind::Session => "session",
        PermissionReplyKind::Project => "project",
        PermissionReplyKind::Deny => "deny",
        PermissionReplyKind::Never => "never",
        PermissionReplyKind::RejectWithFeedback { .. } => "reject_with_feedback",
    }
}

/// The store's row for a snapshot mia-snapshot took.
pub(crate) fn new_snapshot(
    session_id: SessionId,
    snap: &mia_snapshot::Snapshot,
    kind: mia_store::SnapshotKind,
) -> mia_store::NewSnapshot {
    mia_store::NewSnapshot {
        session_id,
        hash: snap.hash.clone(),
        message_id: snap.message_id.clone(),
        tool_call_id: snap.tool_call_id.clone(),
        kind,
        files: snap.files,
        excluded: serde_json::to_value(&snap.excluded).unwrap_or_default(),
        excluded_total: snap.excluded_total,
        mode: serde_json::to_value(snap.mode)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        ms: snap.ms,
        unavailable: None,
    }
}

/// The store's row for a finished step; `None` if the record cannot be encoded.
pub(crate) fn new_step(
    session_id: SessionId,
    record: &mia_snapshot::StepRecord,
) -> Option<mia_store::NewStep> {
    let kind = match record.kind {
        mia_snapshot::StepKind::Tool => "tool",
        mia_snapshot::StepKind::Revert { .. } => "revert",
        mia_snapshot::StepKind::Redo { .. } => "redo",
    };
    Some(mia_store::NewStep {
        id: record.id.clone(),
        session_id,
        message_id: record.message_id.clone(),
        tool_call_id: record.tool_call_id.clone(),
        kind: kind.to_string(),
        before_hash: record.before.clone(),
        after_hash: record.after.clone(),
        record: serde_json::to_value(record).ok()?,
    })
}

/// Text and reasoning deltas coalesced into one Event per kind every
/// [`DELTA_BATCH`] (UIs repaint at ~60 Hz; one Event per token is waste).
struct DeltaBatch {
    session_id: SessionId,
    message_id: MessageId,
    reasoning: bool,
    text: String,
    since: Instant,
}

impl DeltaBatch {
    fn new(session_id: SessionId, message_id: MessageId) -> Self {
        Self {
            session_id,
            message_id,
            reasoning: false,
            text: String::new(),
            since: Instant::now(),
        }
    }

    /// When the pending text must go out, if any is pending.
    fn deadline(&self) -> Option<Instant> {
        (!self.text.is_empty()).then(|| self.since + DELTA_BATCH)
    }

    fn push(&mut self, reasoning: bool, text: &str, emit: impl Fn(Event)) {
        if reasoning != self.reasoning {
            self.flush(&emit);
            self.reasoning = reasoning;
        }
        if self.text.is_empty() {
            self.since = Instant::now();
        }
        self.text.push_str(text);
        if self.since.elapsed() >= DELTA_BATCH {
            self.flush(emit);
        }
    }

    fn flush(&mut self, emit: impl Fn(Event)) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        emit(if self.reasoning {
            Event::ReasoningDelta {
                session_id: self.session_id,
                message_id: self.message_id,
                text,
            }
        } else {
            Event::TextDelta {
                session_id: self.session_id,
                message_id: self.message_id,
                text,
            }
        });
    }
}

#[derive(Default)]
struct TurnTotals {
    steps: u32,
    usage: TokenUsage,
    cost: Option<f64>,
}

impl TurnTotals {
    fn add(&mut self, usage: &TokenUsage, cost: Option<f64>) {
        self.usage.input += usage.input;
        self.usage.output += usage.output;
        self.usage.cache_read += usage.cache_read;
        self.usage.cache_write += usage.cache_write;
        if let Some(c) = cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + c);
        }
    }
}

fn now_iso() -> String {
    let ms = mia_protocol::now_ms();
    let secs = ms / 1000;
    // Civil date from days since the epoch (no time zone: UTC).
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}
