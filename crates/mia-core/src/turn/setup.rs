//! Setting a turn up: config, agent, model, the user message, the
//! provider, paths, approvals.

use std::sync::Arc;

use mia_config::Config;
use mia_permission::{Answerer, PathContext, PermissionRule};
use mia_protocol::{Event, MessageMetadata, NewMessage, PartContent, Role};
use mia_providers::ModelRef;
use mia_tools::ToolContext;
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::agents::{AgentDef, Agents};
use crate::runtime::Runtime;
use crate::session::SessionState;
use crate::snapshots::snapshot_config;
use crate::turn::title_from;

/// What a turn's steps share, set up once per turn.
pub(crate) struct TurnSetup {
    /// Shared with the step's subagents (no copy per step).
    pub(crate) config: Arc<Config>,
    pub(crate) agent_name: String,
    pub(crate) agent: AgentDef,
    pub(crate) model: ModelRef,
    /// Where the model came from: `override`, `agent`, `session` or `config`.
    pub(crate) model_source: &'static str,
    pub(crate) provider: Arc<dyn mia_providers::Provider>,
    pub(crate) catalog: &'static mia_providers::catalog::Catalog,
    pub(crate) wire_model: String,
    pub(crate) path_ctx: PathContext,
    pub(crate) answerer: Answerer,
    pub(crate) tool_ctx: ToolContext,
    /// "Always for this project" approvals (grown by answers in the turn).
    pub(crate) approvals: Vec<PermissionRule>,
    pub(crate) trusted: bool,
    pub(crate) snapshot_config: Option<mia_snapshot::SnapshotConfig>,
    /// The compiled policy and the session rules it was compiled with.
    pub(crate) policy_cache: Option<(Vec<PermissionRule>, Arc<mia_permission::Policy>)>,
    /// The policy the system prompt and the offered tools are derived from:
    /// the agent and the config only (and `--allow`), never the answers
    /// given in the session, so the prompt prefix stays byte-identical.
    pub(crate) prompt_policy: Option<mia_permission::Policy>,
    /// Recent (tool, arguments) pairs: the doom-loop guard.
    pub(crate) recent_calls: Vec<(String, String)>,
    /// A compaction failed this turn: no more automatic attempts (circuit breaker).
    pub(crate) compaction_failed: bool,
    /// The provider's overflow was answered by compacting once already.
    pub(crate) overflow_retried: bool,
    /// The plugins with hooks, for this step.
    pub(crate) plugins: crate::plugins::TurnPlugins,
    /// The config's hooks that apply (docs/configuration.md#hooks).
    pub(crate) hooks: Arc<crate::hooks::Hooks>,
    /// A command's `allowed-tools`: session rules for this turn only.
    pub(crate) turn_rules: Vec<PermissionRule>,
    /// A command's `` !`cmd` `` lines, run as the first step's calls.
    pub(crate) prelude: Vec<String>,
    /// Times a `Stop` hook made the turn go on.
    pub(crate) stop_continues: u32,
}

impl Runtime {
    /// Resolve everything the turn's steps need and store the user message.
    pub(crate) async fn setup_turn(
        &self,
        state: &Arc<SessionState>,
        text: String,
        agent_override: Option<String>,
        model_override: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<TurnSetup, CoreError> {
        let opts = &self.inner.opts;
        let session_id = state.id;
        // A session without a title is named after its first message.
        let new_title = state
            .with(|l| l.session.title.trim().is_empty())
            .then(|| title_from(&text))
            .filter(|t| !t.is_empty());
        let config = self.load_config(Some(state.directory.clone())).await?;
        let agents = Agents::from_config(&config);
        let home = opts.paths.user_home.clone();
        let path_ctx = PathContext::new(&state.directory, Some(home))
            .map_err(|e| CoreError::Failed(e.to_string()))?;
        let Trust { trusted, hooks } = self.trust_of(&config, &path_ctx, state).await?;
        // `/name args`: a custom command's prompt, agent, model and rules.
        let command = self
            .expand_command(&config, &path_ctx, &text, trusted)
            .await?;
        let agent_override =
            agent_override.or_else(|| command.as_ref().and_then(|c| c.agent.clone()));
        let model_override =
            model_override.or_else(|| command.as_ref().and_then(|c| c.model.clone()));
        if let Some(a) = &agent_override {
            agents.session_agent(a)?;
            self.set_agent(state, a).await?;
        }
        let (agent_name, agent, model, model_source) =
            resolve_agent_model(state, &config, &agents, model_override)?;
        // "Always for this project" approvals of the agent (persisted; a
        // worktree shares its repository's).
        let approvals = {
            let key = crate::worktrees::project_key(&path_ctx.root);
            let asked = agent_name.clone();
            self.inner
                .store
                .call(move |db| db.project_approval_rules(&key, &asked))
                .await?
        };
        let prompt = command.as_ref().map_or(text, |c| c.text.clone());
        let context = self.prompt_hooks(state, &config, &hooks, &prompt).await?;
        let mut user_parts = self.user_parts(state, &agents, &agent_name, prompt).await?;
        user_parts.extend(context.into_iter().map(|text| PartContent::Text {
            text,
            synthetic: true,
        }));
        let mut extra = serde_json::Map::new();
        if let Some(c) = &command {
            extra.insert(
                "command".to_string(),
                serde_json::Value::from(c.invocation.clone()),
            );
        }
        self.add_message(
            session_id,
            NewMessage {
                role: Some(Role::User),
                metadata: MessageMetadata {
                    agent: Some(agent_name.clone()),
                    model: Some(model.to_string()),
                    extra,
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

        let provider = self.provider(&config, &model.provider_id).await?;
        let catalog = mia_providers::catalog::builtin();
        let wire_model = catalog.wire_id(&model.provider_id, &model.model_id);
        let answerer = if opts.interactive {
            Answerer::Person
        } else {
            Answerer::Headless
        };
        let tool_ctx = tool_context(state, &path_ctx, cancel);
        let snapshot_config = snapshot_config(&config, &opts.paths);
        let (turn_rules, prelude) = command.map(|c| (c.rules, c.shell)).unwrap_or_default();
        Ok(TurnSetup {
            config: Arc::new(config),
            agent_name,
            agent,
            model,
            model_source,
            provider,
            catalog,
            wire_model,

            path_ctx,
            answerer,
            tool_ctx,
            approvals,
            trusted,
            snapshot_config,
            policy_cache: None,
            prompt_policy: None,
            recent_calls: Vec::new(),
            compaction_failed: false,
            overflow_retried: false,
            plugins: crate::plugins::TurnPlugins::default(),
            hooks: Arc::new(hooks),
            turn_rules,
            prelude,
            stop_continues: 0,
        })
    }

    /// Workspace trust and the hooks that apply (persisted; a worktree
    /// shares its repository's).
    async fn trust_of(
        &self,
        config: &Config,
        path_ctx: &PathContext,
        state: &SessionState,
    ) -> Result<Trust, CoreError> {
        let project_key = crate::worktrees::project_key(&path_ctx.root);
        let (trusted, approved) = self
            .inner
            .store
            .call(move |db| {
                Ok((
                    db.is_workspace_trusted(&project_key)?,
                    db.approved_hooks(&project_key)?,
                ))
            })
            .await?;
        let hooks = crate::hooks::Hooks::from_config(config, trusted, approved.as_deref());
        if let Some(why) = &hooks.skipped {
            self.emit(Event::Notice {
                session_id: Some(state.id),
                message: why.clone(),
            });
        }
        Ok(Trust { trusted, hooks })
    }

    /// `SessionStart` (the session's first turn in this process) and
    /// `UserPromptSubmit` hooks: the context they add, or the prompt
    /// refused with their reason (nothing is stored).
    async fn prompt_hooks(
        &self,
        state: &SessionState,
        config: &Config,
        hooks: &crate::hooks::Hooks,
        prompt: &str,
    ) -> Result<Vec<String>, CoreError> {
        use mia_config::HookEvent;
        let site = crate::hooks::HookSite {
            config,
            dir: &state.directory,
            session_id: state.id,
            call_id: None,
        };
        let mut context = Vec::new();
        let first = state.with(|l| !std::mem::replace(&mut l.started, true));
        if first && hooks.has(HookEvent::SessionStart) {
            let source = if self.message_count(state.id).await? == 0 {
                "startup"
            } else {
                "resume"
            };
            let v = self
                .run_hooks(
                    hooks,
                    &site,
                    HookEvent::SessionStart,
                    Some(source),
                    serde_json::json!({ "source": source }),
                )
                .await;
            context.extend(v.context);
        }
        if hooks.has(HookEvent::UserPromptSubmit) {
            let v = self
                .run_hooks(
                    hooks,
                    &site,
                    HookEvent::UserPromptSubmit,
                    None,
                    serde_json::json!({ "prompt": prompt }),
                )
                .await;
            if let Some(why) = v.block.or(v.stop) {
                return Err(CoreError::Refused(format!(
                    "a UserPromptSubmit hook blocked the prompt: {why}"
                )));
            }
            context.extend(v.context);
        }
        Ok(context)
    }
}

/// What the store says about the project.
struct Trust {
    trusted: bool,
    hooks: crate::hooks::Hooks,
}

/// The session's agent (a subagent's own session runs that subagent;
/// every other session a visible primary agent) and its model, in spec
/// 016's order: explicit override (this turn's, then `/model`'s pick for
/// the agent) > agent config > session > global config. The source is
/// recorded with every step's message.
fn resolve_agent_model(
    state: &SessionState,
    config: &Config,
    agents: &Agents,
    model_override: Option<String>,
) -> Result<(String, AgentDef, ModelRef, &'static str), CoreError> {
    let session = state.session();
    let agent_name = session
        .agent
        .clone()
        .unwrap_or_else(|| config.default_agent().to_string());
    let agent = if session.spawned_by.is_some() {
        let def = agents.get(&agent_name)?;
        if let crate::agents::PromptSource::Refused(why) = &def.prompt {
            return Err(CoreError::Refused(why.clone()));
        }
        def.clone()
    } else {
        agents.session_agent(&agent_name)?.clone()
    };
    let (model_text, model_source) = model_override
        .map(|m| (m, "override"))
        .or_else(|| {
            session
                .agent_models
                .get(&agent_name)
                .cloned()
                .map(|m| (m, "picked"))
        })
        .or_else(|| agent.model.clone().map(|m| (m, "agent")))
        .or_else(|| session.model.clone().map(|m| (m, "session")))
        .or_else(|| config.merged.model.clone().map(|m| (m, "config")))
        .ok_or(CoreError::NoModel)?;
    tracing::info!(session = %session.id, agent = %agent_name, model = %model_text, source = model_source, "model chosen");
    let model: ModelRef = model_text
        .parse()
        .map_err(|_| CoreError::BadModel(model_text.clone()))?;
    Ok((agent_name, agent, model, model_source))
}

/// What the turn's tools start with; each step equips it further.
fn tool_context(
    state: &SessionState,
    path_ctx: &PathContext,
    cancel: &CancellationToken,
) -> ToolContext {
    ToolContext {
        project_root: path_ctx.root.clone(),
        cancel: cancel.clone(),
        todos: state.todos.clone(),
        read_filter: None,
        read_only_shell: false,
        sandbox: mia_tools::ShellSandbox::Off {
            env: mia_sandbox::EnvRule::default(),
        },
        network: None,
        progress: None,
        extra_tools: mia_tools::ExtraTools::default(),
        delegator: None,
        call_id: None,
        editor: state.editor(),
    }
}

impl Runtime {
    /// The user message's parts: the text, a note for each `@agent` the
    /// user asked to delegate to, and a note when build takes over from
    /// plan (spec 014; compared with the agent of the previous user
    /// message, as stored).
    async fn user_parts(
        &self,
        state: &SessionState,
        agents: &Agents,
        agent_name: &str,
        text: String,
    ) -> Result<Vec<PartContent>, CoreError> {
        let session_id = state.id;
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
        // `@explore find …`: a delegation the user asked for (file mentions
        // like `@src/x.rs` are not agent names and stay as they are).
        let mentioned: Vec<String> = {
            let lineage = state.lineage().clone();
            let callable = crate::delegate::callable(agents, agent_name, &lineage);
            crate::delegate::mentions(&text)
                .into_iter()
                .filter(|m| callable.iter().any(|a| a.name == *m))
                .collect()
        };
        let mut user_parts = vec![PartContent::text(text)];
        for m in &mentioned {
            user_parts.push(PartContent::Text {
                text: format!(
                    "[The user asks you to delegate to @{m}: call the task tool with agent \"{m}\" and the part of the request meant for it as the prompt.]"
                ),
                synthetic: true,
            });
        }
        let was_planning = previous
            .as_deref()
            .and_then(|p| agents.get(p).ok())
            .is_some_and(|p| p.caps.read_only);
        let planning = agents.get(agent_name).is_ok_and(|a| a.caps.read_only);
        if was_planning && !planning {
            user_parts.push(PartContent::Text {
                text: format!(
                    "[The user switched from plan mode to {agent_name} mode: you may now make changes.]"
                ),
                synthetic: true,
            });
        }
        Ok(user_parts)
    }
}
