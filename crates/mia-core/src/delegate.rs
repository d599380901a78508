//! Subagent delegation (spec 015): a `task` call runs a subagent in a child
//! session (`spawned_by` the parent and the call; not a fork) with the
//! subagent's own prompt and model, a focused context (the task, the last
//! few parent messages, the project), and permissions that are the
//! intersection of its own and every ancestor's. Its final answer and
//! figures come back as the tool result. Limits: depth 2, 3 at a time per
//! session (more wait, visibly), a timeout returning partial results;
//! cancelling the parent cancels its children.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mia_config::{AgentMode, Config};
use mia_permission::Policy;
use mia_protocol::{Event, Message, PartContent, Role, SessionId, SpawnInfo, SubagentStatus};
use mia_providers::ModelRef;
use mia_tools::{Delegate, TASK_DESCRIPTION, TaskInput, ToolContext};

use crate::CoreError;
use crate::agents::{AgentDef, Agents, PromptSource};
use crate::runtime::Runtime;
use crate::session::SessionState;

/// A `task` call's result: the tool output and whether it failed.
pub(crate) type TaskFuture<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<(String, bool), CoreError>> + Send + 'a>,
>;

/// How deep delegation goes: a subagent may delegate once more, no further.
pub const MAX_DEPTH: u32 = 2;
/// Subagents running at once per session; more wait for a slot.
pub const MAX_CONCURRENT: usize = 3;
/// Parent messages a subagent sees (spec 015: "the last N messages", default 5).
pub const CONTEXT_MESSAGES: u32 = 5;

/// Where a session sits in a delegation chain.
#[derive(Clone, Default)]
pub(crate) struct Lineage {
    /// 0 for a session the user started; 1 for its subagents; 2 for theirs.
    pub(crate) depth: u32,
    /// The ancestors' compiled policies, nearest first: the child's checks
    /// intersect with every one.
    pub(crate) ancestors: Vec<Arc<Policy>>,
    /// The ancestors' agents (no circular delegation).
    pub(crate) agents: Vec<String>,
    /// The session the user started the chain from.
    pub(crate) root: Option<SessionId>,
}

/// What a `task` call of the running step needs from its turn.
#[derive(Clone)]
pub(crate) struct StepContext {
    pub(crate) config: Arc<Config>,
    pub(crate) model: ModelRef,
    pub(crate) agent: String,
    /// The calling agent's compiled policy this step.
    pub(crate) policy: Arc<Policy>,
}

/// The agents `caller` may delegate to: visible subagents (mode subagent or
/// all) other than itself and its ancestors, whose prompts load.
pub(crate) fn callable<'a>(
    agents: &'a Agents,
    caller: &str,
    lineage: &Lineage,
) -> Vec<&'a AgentDef> {
    agents
        .all()
        .filter(|a| matches!(a.mode, AgentMode::Subagent | AgentMode::All))
        .filter(|a| !a.hidden && a.name != caller && !lineage.agents.contains(&a.name))
        .filter(|a| !matches!(a.prompt, PromptSource::Refused(_)))
        .collect()
}

/// `@name` mentions in a message that could be agent names: `@` at the
/// start of a word followed by letters, digits, `-` or `_` only (so
/// `@src/x.rs` and `a@b.c` are not).
pub(crate) fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(name) = word.strip_prefix('@') else {
            continue;
        };
        let name = name.trim_end_matches([',', ':', ';', '.', '!', '?', ')']);
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
            && !out.iter().any(|o| o == name)
        {
            out.push(name.to_string());
        }
    }
    out
}

/// The `task` tool's description: what it does and whom it may call.
pub(crate) fn task_description(callable: &[&AgentDef]) -> String {
    let mut d = format!("{TASK_DESCRIPTION}\n\nSubagents you can call:");
    for a in callable {
        d.push_str(&format!("\n- {}: {}", a.name, a.description));
    }
    d
}

/// A structured failure returned to the model as the tool's error result.
fn failed(kind: &str, message: String) -> (String, bool) {
    (format!("Delegation failed ({kind}): {message}"), true)
}

/// The step's subagents: the `task` tool's [`Delegate`]. Its description
/// names whom the agent may call; `None` when nobody (delegation as deep
/// as it goes, no callable subagent, or an agent that cannot delegate).
pub(crate) struct Subagents {
    pub(crate) runtime: Runtime,
    pub(crate) parent: Arc<SessionState>,
    pub(crate) step: StepContext,
    pub(crate) description: Option<String>,
}

#[async_trait::async_trait]
impl Delegate for Subagents {
    fn description(&self) -> Option<String> {
        self.description.clone()
    }

    async fn delegate(
        &self,
        input: TaskInput,
        ctx: &ToolContext,
    ) -> Result<mia_tools::ToolOutput, mia_tools::ToolError> {
        let call_id = ctx.call_id.clone().unwrap_or_default();
        match self
            .runtime
            .delegate(&self.parent, &self.step, &call_id, input, ctx)
            .await
        {
            Ok((output, failed)) => Ok(mia_tools::ToolOutput {
                output,
                metadata: serde_json::json!({ "subagent_failed": failed }),
            }),
            Err(e) => Err(mia_tools::ToolError::Invalid(e.to_string())),
        }
    }
}

impl Runtime {
    /// Run one `task` call of `parent`'s step; returns the tool result
    /// (and whether it failed). Boxed: the subagent's turn runs the same
    /// dispatch code again.
    pub(crate) fn delegate<'a>(
        &'a self,
        parent: &'a Arc<SessionState>,
        step: &'a StepContext,
        call_id: &'a str,
        input: TaskInput,
        ctx: &'a ToolContext,
    ) -> TaskFuture<'a> {
        Box::pin(self.delegate_inner(parent, step, call_id, input, ctx))
    }

    /// Stages of a `task` call: pick the subagent → wait for a slot →
    /// create the child session → run its turn → report.
    async fn delegate_inner(
        &self,
        parent: &Arc<SessionState>,
        step: &StepContext,
        call_id: &str,
        input: TaskInput,
        ctx: &ToolContext,
    ) -> Result<(String, bool), CoreError> {
        let lineage = parent.lineage().clone();
        let parent_id = parent.id;
        let def = match pick_subagent(step, &lineage, &input.agent) {
            Ok(def) => def,
            Err(refused) => return Ok(refused),
        };
        // A slot: at most MAX_CONCURRENT at once; more wait, visibly.
        let permit = match parent.children.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                self.emit(Event::SubagentQueued {
                    session_id: parent_id,
                    call_id: call_id.to_string(),
                    agent: def.name.clone(),
                });
                tokio::select! {
                    p = parent.children.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => return Err(CoreError::Internal("the subagent slots were closed".into())),
                    },
                    () = ctx.cancel.cancelled() => return Ok(failed("cancelled", "stopped before it started".into())),
                }
            }
        };
        let child = Child {
            parent_id,
            call_id,
            def: &def,
            description: input
                .description
                .clone()
                .filter(|d| !d.trim().is_empty())
                .unwrap_or_else(|| crate::turn::title_from(&input.prompt)),
        };
        let child_state = self.spawn_child(parent, step, &lineage, &child).await?;
        let text = self.task_text(parent_id, &input, &parent.directory).await?;
        let ran = self.run_child(&child_state, &child, text, ctx).await?;
        drop(permit);
        self.child_result(&child, ran, ctx).await
    }

    /// The child session, linked from the parent's message, with its
    /// place in the delegation chain.
    async fn spawn_child(
        &self,
        parent: &Arc<SessionState>,
        step: &StepContext,
        lineage: &Lineage,
        child: &Child<'_>,
    ) -> Result<Arc<SessionState>, CoreError> {
        let (def, parent_id) = (child.def, child.parent_id);
        let directory = parent.directory.display().to_string();
        let spawned = SpawnInfo {
            session_id: parent_id,
            call_id: child.call_id.to_string(),
            agent: step.agent.clone(),
        };
        let (agent_name, model_text, title) = (
            def.name.clone(),
            child_model(def, step),
            child.description.clone(),
        );
        let session = self
            .inner
            .store
            .call(move |db| {
                db.create_session(mia_store::NewSession {
                    directory,
                    title,
                    agent: Some(agent_name),
                    model: Some(model_text),
                    spawned_by: Some(spawned),
                    ..Default::default()
                })
            })
            .await?;
        let child_id = session.id;
        self.emit(Event::SessionUpdated { session });
        // The parent's message links the call to the child session (a reload
        // finds the child without searching the session list).
        let call_id = child.call_id.to_string();
        let link = PartContent::Subagent {
            session_id: child_id,
            agent: def.name.clone(),
            description: child.description.clone(),
            status: "started".into(),
        };
        self.inner
            .store
            .call(move |db| {
                if let Some(m) = db.message_with_call(&parent_id, &call_id)?
                    && let Ok(m) = m.parse::<mia_protocol::MessageId>()
                {
                    db.append_parts(&parent_id, &m, vec![link])?;
                }
                Ok(())
            })
            .await?;
        let child_state = self.state(child_id).await?;
        let mut ancestors = vec![step.policy.clone()];
        ancestors.extend(lineage.ancestors.iter().cloned());
        let mut agents_up = vec![step.agent.clone()];
        agents_up.extend(lineage.agents.iter().cloned());
        child_state.set_lineage(Lineage {
            depth: lineage.depth + 1,
            ancestors,
            agents: agents_up,
            root: Some(lineage.root.unwrap_or(parent_id)),
        });
        Ok(child_state)
    }

    /// The child's turn, stopped with the parent's or at its timeout.
    async fn run_child(
        &self,
        child_state: &Arc<SessionState>,
        child: &Child<'_>,
        text: String,
        ctx: &ToolContext,
    ) -> Result<ChildRun, CoreError> {
        let child_id = child_state.id;
        let cancel = self.claim(child_state, "turn").await?;
        // Stopping the parent stops the child.
        let link = {
            let parent_cancel = ctx.cancel.clone();
            let child_cancel = cancel.clone();
            tokio::spawn(async move {
                parent_cancel.cancelled().await;
                child_cancel.cancel();
            })
        };
        self.emit(Event::SubagentStarted {
            session_id: child.parent_id,
            child_session_id: child_id,
            call_id: child.call_id.to_string(),
            agent: child.def.name.clone(),
            description: child.description.clone(),
        });
        let started = Instant::now();
        // The child's own report of how its turn ended (errors before any step too).
        let mut watch = self.subscribe();
        let mut turn = {
            let rt = self.clone();
            let state = child_state.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { rt.turn(state, text, None, None, cancel).await })
        };
        let timeout = Duration::from_secs(u64::from(child.def.timeout_secs));
        let timed_out = tokio::select! {
            _ = &mut turn => false,
            () = tokio::time::sleep(timeout) => {
                cancel.cancel();
                let _ = turn.await;
                true
            }
        };
        link.abort();
        let mut run = ChildRun {
            child_id,
            timed_out,
            end: None,
            error: None,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        };
        while let Ok(e) = watch.try_recv() {
            match e {
                Event::Error {
                    session_id: Some(s),
                    message,
                    ..
                } if s == child_id => run.error = Some(message),
                Event::TurnFinished {
                    session_id, end, ..
                } if session_id == child_id => run.end = Some(end),
                _ => {}
            }
        }
        Ok(run)
    }

    /// What the child produced, as the `task` call's result.
    async fn child_result(
        &self,
        child: &Child<'_>,
        run: ChildRun,
        ctx: &ToolContext,
    ) -> Result<(String, bool), CoreError> {
        let child_id = run.child_id;
        let messages: Vec<Message> = self
            .inner
            .store
            .call(move |db| db.get_messages(&child_id, &mia_store::MessageQuery::default()))
            .await?;
        let mut report = ChildReport::of(&messages);
        if report.error.is_none() {
            report.error = run.error.clone();
        }
        let status = run.status(&report, ctx.cancel.is_cancelled());
        self.emit(Event::SubagentFinished {
            session_id: child.parent_id,
            child_session_id: child_id,
            call_id: child.call_id.to_string(),
            agent: child.def.name.clone(),
            status,
            duration_ms: run.duration_ms,
            steps: report.steps,
            tool_calls: report.tool_calls,
            cost_usd: report.cost,
        });
        Ok((
            report.render(child.def, status, &run),
            status != SubagentStatus::Completed,
        ))
    }

    /// The child's one message: the task, the parent's last messages, the project.
    async fn task_text(
        &self,
        parent: SessionId,
        input: &TaskInput,
        directory: &std::path::Path,
    ) -> Result<String, CoreError> {
        let recent = self
            .inner
            .store
            .call(move |db| {
                db.get_messages(
                    &parent,
                    &mia_store::MessageQuery {
                        limit: Some(CONTEXT_MESSAGES + 1),
                        tail: true,
                        ..Default::default()
                    },
                )
            })
            .await?;
        let mut text = input.prompt.trim().to_string();
        let lines: Vec<String> = recent
            .iter()
            .filter(|m| m.role != Role::System)
            .flat_map(|m| {
                let who = if m.role == Role::User {
                    "User"
                } else {
                    "Assistant"
                };
                m.parts.iter().filter_map(move |p| match &p.content {
                    PartContent::Text {
                        text,
                        synthetic: false,
                    } if !text.trim().is_empty() => {
                        let t: String = text.chars().take(1_500).collect();
                        Some(format!("{who}: {t}"))
                    }
                    _ => None,
                })
            })
            .collect();
        if !lines.is_empty() {
            text.push_str("\n\n---\nFor context, the last messages of the conversation that delegated this task:\n");
            text.push_str(&lines.join("\n"));
        }
        let name = directory
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        text.push_str(&format!(
            "\n\n---\nProject: {name} at {}. Answer with what you found or did; your final message is returned to the agent that delegated.",
            directory.display()
        ));
        Ok(text)
    }
}

/// The subagent a `task` call names, if the caller may call it; else the
/// failure the model gets back, naming whom it can call.
fn pick_subagent(
    step: &StepContext,
    lineage: &Lineage,
    name: &str,
) -> Result<AgentDef, (String, bool)> {
    let agents = Agents::from_config(&step.config);
    let callable = callable(&agents, &step.agent, lineage);
    let names = || {
        callable
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if lineage.depth >= MAX_DEPTH {
        return Err(failed(
            "depth",
            format!("subagents stop {MAX_DEPTH} levels deep; do this task yourself"),
        ));
    }
    let Ok(def) = agents.get(name) else {
        return Err(failed(
            "agent_not_found",
            format!("there is no agent `{name}`; you can call: {}", names()),
        ));
    };
    if !callable.iter().any(|a| a.name == def.name) {
        let why = if def.name == step.agent || lineage.agents.contains(&def.name) {
            "it is this agent or one that delegated to it (no circular delegation)"
        } else if def.hidden {
            "it is an internal agent"
        } else {
            "it is a primary agent, not a subagent"
        };
        return Err(failed(
            "not_callable",
            format!(
                "`{}` cannot be called: {why}; you can call: {}",
                def.name,
                names()
            ),
        ));
    }
    Ok(def.clone())
}

/// The child's model: the agent's own, else (explore) the provider's
/// fast model, else the caller's.
fn child_model(def: &AgentDef, step: &StepContext) -> String {
    let catalog = mia_providers::catalog::builtin();
    def.model
        .clone()
        .or_else(|| {
            def.caps
                .fast_model
                .then(|| catalog.fast_model(&step.model.provider_id))
                .flatten()
                .map(|m| m.to_string())
        })
        .unwrap_or_else(|| step.model.to_string())
}

/// One delegation: who asked (the parent session and its call), whom, what for.
struct Child<'a> {
    parent_id: SessionId,
    call_id: &'a str,
    def: &'a AgentDef,
    description: String,
}

/// How a child's turn went.
struct ChildRun {
    child_id: SessionId,
    timed_out: bool,
    end: Option<mia_protocol::TurnEnd>,
    /// The child's last error Event.
    error: Option<String>,
    duration_ms: u64,
}

impl ChildRun {
    fn status(&self, report: &ChildReport, parent_cancelled: bool) -> SubagentStatus {
        use mia_protocol::TurnEnd;
        if self.timed_out {
            SubagentStatus::Timeout
        } else if parent_cancelled || self.end == Some(TurnEnd::Cancelled) {
            SubagentStatus::Cancelled
        } else if report.error.is_some()
            || matches!(self.end, Some(TurnEnd::Error | TurnEnd::Blocked))
        {
            SubagentStatus::Error
        } else {
            SubagentStatus::Completed
        }
    }
}

/// The figures of a child's work, from its stored messages.
#[derive(Debug, Default)]
struct ChildReport {
    text: String,
    steps: u32,
    tool_calls: u32,
    input_tokens: u64,
    output_tokens: u64,
    cost: Option<f64>,
    error: Option<String>,
}

impl ChildReport {
    /// The tool result: the child's answer, its last error, its figures.
    fn render(&self, def: &AgentDef, status: SubagentStatus, run: &ChildRun) -> String {
        let mut out = match (status, self.text.trim().is_empty()) {
            (_, false) => self.text.trim().to_string(),
            (SubagentStatus::Timeout, true) => "(no answer before the timeout)".to_string(),
            (_, true) => "(no answer)".to_string(),
        };
        if let Some(e) = &self.error {
            out.push_str(&format!("\n\nThe subagent's last error: {e}"));
        }
        let cost = self.cost.map(|c| format!(", ${c:.4}")).unwrap_or_default();
        out.push_str(&format!(
            "\n\n[subagent {} — {status}{}, {} steps, {} tool calls, {} input / {} output tokens{cost}, {:.1} s; session {}]",
            def.name,
            if run.timed_out {
                format!(" after {} s (partial result)", def.timeout_secs)
            } else {
                String::new()
            },
            self.steps,
            self.tool_calls,
            self.input_tokens,
            self.output_tokens,
            run.duration_ms as f64 / 1000.0,
            run.child_id,
        ));
        out
    }

    fn of(messages: &[Message]) -> Self {
        let mut r = Self::default();
        let mut last_text = String::new();
        for m in messages.iter().filter(|m| m.role == Role::Assistant) {
            r.steps += 1;
            if let Some(t) = &m.metadata.tokens {
                r.input_tokens += t.input + t.cache_read + t.cache_write;
                r.output_tokens += t.output;
            }
            if let Some(c) = m.metadata.cost_usd {
                r.cost = Some(r.cost.unwrap_or(0.0) + c);
            }
            let mut text = String::new();
            for p in &m.parts {
                match &p.content {
                    PartContent::Text { text: t, .. } => {
                        text.push_str(t);
                        text.push('\n');
                    }
                    PartContent::ToolCall { .. } => r.tool_calls += 1,
                    PartContent::Error { message, .. } => r.error = Some(message.clone()),
                    _ => {}
                }
            }
            if !text.trim().is_empty() {
                last_text = text;
            }
        }
        r.text = last_text;
        r
    }
}

impl Runtime {
    /// The lineage of a spawned session whose state was loaded fresh (the
    /// process restarted, or the state was evicted): rebuilt from the
    /// `spawned_by` chain, each ancestor's policy compiled for its agent
    /// (with that session's live answers when this process has them), so a
    /// subagent's session opened on its own stays within its ancestors' rules.
    pub(crate) async fn ensure_lineage(
        &self,
        state: &Arc<SessionState>,
        config: &Config,
        approvals: &[mia_permission::PermissionRule],
        trusted: bool,
    ) -> Result<(), CoreError> {
        let spawned = state.with(|l| l.session.spawned_by.clone());
        let Some(mut up) = spawned else {
            return Ok(());
        };
        if state.lineage().depth > 0 {
            return Ok(());
        }
        let mut lineage = Lineage::default();
        loop {
            let rules = self
                .loaded_state(up.session_id)
                .and_then(|s| {
                    s.with(|l| l.session_rules.get(&up.agent).map(|r| r.rules().to_vec()))
                })
                .unwrap_or_default();
            let policy =
                crate::permissions::PolicyRecipe::new(config, &up.agent, &self.options().paths)
                    .session(rules)
                    .project(approvals.to_vec(), trusted)
                    .compile();
            lineage.ancestors.push(Arc::new(policy));
            lineage.agents.push(up.agent.clone());
            lineage.depth += 1;
            lineage.root = Some(up.session_id);
            let id = up.session_id;
            let parent = self.inner.store.call(move |db| db.get_session(&id)).await?;
            match parent.spawned_by {
                Some(next) if lineage.depth < 8 => up = next,
                _ => break,
            }
        }
        state.set_lineage(lineage);
        Ok(())
    }
}

fn line(agent: &str, model: &str, rows: &[&mia_store::UsageRow]) -> mia_protocol::CostLine {
    let mut l = mia_protocol::CostLine {
        agent: agent.to_string(),
        model: model.to_string(),
        requests: 0,
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: 0.0,
    };
    for r in rows {
        l.requests += r.requests;
        l.input_tokens += r.input;
        l.output_tokens += r.output;
        l.cache_read_tokens += r.cache_read;
        l.cache_write_tokens += r.cache_write;
        l.cost_usd += r.cost_usd;
    }
    l
}

impl Runtime {
    /// What a session cost per agent and model, its subagents included
    /// (`mia-code cost`, `/cost`), from each message's recorded usage.
    pub async fn cost(&self, session_id: SessionId) -> Result<mia_protocol::CostView, CoreError> {
        self.inner
            .store
            .call(move |db| {
                db.get_session(&session_id)?;
                let mut children = Vec::new();
                let mut frontier = vec![session_id];
                // Depth 2 plus slack; a cycle cannot happen (children are newer).
                for _ in 0..4 {
                    let mut next = Vec::new();
                    for s in &frontier {
                        next.extend(db.spawned_children(s)?);
                    }
                    if next.is_empty() {
                        break;
                    }
                    children.extend(next.iter().copied());
                    frontier = next;
                }
                let own = db.usage(&[session_id])?;
                let mut all_ids = vec![session_id];
                all_ids.extend(children.iter().copied());
                let all = db.usage(&all_ids)?;
                let lines = all.iter().map(|r| line(&r.agent, &r.model, &[r])).collect();
                Ok(mia_protocol::CostView {
                    session_id: session_id.to_string(),
                    lines,
                    session: line("", "", &own.iter().collect::<Vec<_>>()),
                    total: line("", "", &all.iter().collect::<Vec<_>>()),
                    subagent_sessions: children.iter().map(ToString::to_string).collect(),
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn agent_mentions_follow_the_file_mention_rules() {
        assert_eq!(mentions("@explore find the EventBus uses"), ["explore"]);
        assert_eq!(
            mentions("look at @src/x.rs and ask @general, please"),
            ["general"]
        );
        assert_eq!(mentions("mail a@b.c or @README.md"), Vec::<String>::new());
        assert_eq!(mentions("@explore a, @explore b"), ["explore"]);
    }
}
