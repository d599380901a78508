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
use mia_protocol::{Event, Message, PartContent, Role, SessionId, SpawnInfo};
use mia_providers::ModelRef;
use mia_tools::{TASK_DESCRIPTION, TaskInput, ToolContext};

use crate::CoreError;
use crate::agents::{AgentDef, Agents, PromptSource};
use crate::runtime::{Runtime, lock};
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
    pub(crate) config: Config,
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

impl Runtime {
    /// Run one `task` call of `parent`'s step; returns the tool result
    /// (and whether it failed). Boxed: the subagent's turn runs the same
    /// dispatch code again.
    pub(crate) fn delegate<'a>(
        &'a self,
        parent: &'a Arc<SessionState>,
        call: &'a mia_providers::ToolCall,
        ctx: &'a ToolContext,
    ) -> TaskFuture<'a> {
        Box::pin(self.delegate_inner(parent, call, ctx))
    }

    async fn delegate_inner(
        &self,
        parent: &Arc<SessionState>,
        call: &mia_providers::ToolCall,
        ctx: &ToolContext,
    ) -> Result<(String, bool), CoreError> {
        let input: TaskInput = match serde_json::from_value(call.input.clone()) {
            Ok(i) => i,
            Err(e) => return Ok(failed("invalid_input", e.to_string())),
        };
        let Some(step) = lock(&parent.step_context).clone() else {
            return Err(CoreError::Internal("a task call outside a turn".into()));
        };
        let lineage = lock(&parent.lineage).clone();
        let parent_id = lock(&parent.session).id;
        let agents = Agents::from_config(&step.config);
        let callable = callable(&agents, &step.agent, &lineage);
        let names = || {
            callable
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if lineage.depth >= MAX_DEPTH {
            return Ok(failed(
                "depth",
                format!("subagents stop {MAX_DEPTH} levels deep; do this task yourself"),
            ));
        }
        let def = match agents.get(&input.agent) {
            Ok(d) => d.clone(),
            Err(_) => {
                return Ok(failed(
                    "agent_not_found",
                    format!(
                        "there is no agent `{}`; you can call: {}",
                        input.agent,
                        names()
                    ),
                ));
            }
        };
        if !callable.iter().any(|a| a.name == def.name) {
            let why = if def.name == step.agent || lineage.agents.contains(&def.name) {
                "it is this agent or one that delegated to it (no circular delegation)"
            } else if def.hidden {
                "it is an internal agent"
            } else {
                "it is a primary agent, not a subagent"
            };
            return Ok(failed(
                "not_callable",
                format!(
                    "`{}` cannot be called: {why}; you can call: {}",
                    def.name,
                    names()
                ),
            ));
        }

        // A slot: at most MAX_CONCURRENT at once; more wait, visibly.
        let permit = match parent.children.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                self.emit(Event::SubagentQueued {
                    session_id: parent_id,
                    call_id: call.id.clone(),
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

        // Model: the agent's own, else (explore) the provider's fast model, else the caller's.
        let catalog = mia_providers::catalog::builtin();
        let model = def
            .model
            .clone()
            .or_else(|| {
                (def.name == "explore")
                    .then(|| catalog.fast_model(&step.model.provider_id))
                    .flatten()
                    .map(|m| m.to_string())
            })
            .unwrap_or_else(|| step.model.to_string());
        let description = input
            .description
            .clone()
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| crate::turn::title_from(&input.prompt));
        let directory = parent.directory.display().to_string();
        let spawned = SpawnInfo {
            session_id: parent_id,
            call_id: call.id.clone(),
            agent: step.agent.clone(),
        };
        let (agent_name, model_text, title) =
            (def.name.clone(), model.clone(), description.clone());
        let child = self
            .store()
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
        let child_id = child.id;
        self.emit(Event::SessionUpdated {
            session: child.clone(),
        });
        // The parent's message links the call to the child session (a reload
        // finds the child without searching the session list).
        let call_id = call.id.clone();
        let link = PartContent::Subagent {
            session_id: child_id,
            agent: def.name.clone(),
            description: description.clone(),
            status: "started".into(),
        };
        self.store()
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
        {
            let mut ancestors = vec![step.policy.clone()];
            ancestors.extend(lineage.ancestors.iter().cloned());
            let mut agents_up = vec![step.agent.clone()];
            agents_up.extend(lineage.agents.iter().cloned());
            *lock(&child_state.lineage) = Lineage {
                depth: lineage.depth + 1,
                ancestors,
                agents: agents_up,
                root: Some(lineage.root.unwrap_or(parent_id)),
            };
        }
        let text = self.task_text(parent_id, &input, &parent.directory).await?;

        let cancel = self.claim(&child_state, "turn").await?;
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
            session_id: parent_id,
            child_session_id: child_id,
            call_id: call.id.clone(),
            agent: def.name.clone(),
            description: description.clone(),
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
        let timeout = Duration::from_secs(u64::from(def.timeout_secs));
        let timed_out = tokio::select! {
            _ = &mut turn => false,
            () = tokio::time::sleep(timeout) => {
                cancel.cancel();
                let _ = turn.await;
                true
            }
        };
        link.abort();
        drop(permit);
        let mut child_end = None;
        let mut child_error = None;
        while let Ok(e) = watch.try_recv() {
            match e {
                Event::Error {
                    session_id: Some(s),
                    message,
                    ..
                } if s == child_id => child_error = Some(message),
                Event::TurnFinished {
                    session_id, end, ..
                } if session_id == child_id => {
                    child_end = Some(end);
                }
                _ => {}
            }
        }
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);

        // What the child produced.
        let messages: Vec<Message> = self
            .store()
            .call(move |db| db.get_messages(&child_id, &mia_store::MessageQuery::default()))
            .await?;
        let mut report = ChildReport::of(&messages);
        if report.error.is_none() {
            report.error = child_error;
        }
        let status = if timed_out {
            "timeout"
        } else if ctx.cancel.is_cancelled() || child_end == Some(mia_protocol::TurnEnd::Cancelled) {
            "cancelled"
        } else if report.error.is_some()
            || matches!(
                child_end,
                Some(mia_protocol::TurnEnd::Error | mia_protocol::TurnEnd::Blocked)
            )
        {
            "error"
        } else {
            "completed"
        };
        self.emit(Event::SubagentFinished {
            session_id: parent_id,
            child_session_id: child_id,
            call_id: call.id.clone(),
            agent: def.name.clone(),
            status: status.into(),
            duration_ms,
            steps: report.steps,
            tool_calls: report.tool_calls,
            cost_usd: report.cost,
        });
        let mut out = match (status, report.text.trim().is_empty()) {
            (_, false) => report.text.trim().to_string(),
            ("timeout", true) => "(no answer before the timeout)".to_string(),
            (_, true) => "(no answer)".to_string(),
        };
        if let Some(e) = &report.error {
            out.push_str(&format!("\n\nThe subagent's last error: {e}"));
        }
        let cost = report
            .cost
            .map(|c| format!(", ${c:.4}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n\n[subagent {} — {status}{}, {} steps, {} tool calls, {} input / {} output tokens{cost}, {:.1} s; session {child_id}]",
            def.name,
            if timed_out {
                format!(" after {} s (partial result)", def.timeout_secs)
            } else {
                String::new()
            },
            report.steps,
            report.tool_calls,
            report.input_tokens,
            report.output_tokens,
            duration_ms as f64 / 1000.0,
        ));
        Ok((out, status != "completed"))
    }

    /// The child's one message: the task, the parent's last messages, the project.
    async fn task_text(
        &self,
        parent: SessionId,
        input: &TaskInput,
        directory: &std::path::Path,
    ) -> Result<String, CoreError> {
        let recent = self
            .store()
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
        let spawned = lock(&state.session).spawned_by.clone();
        let Some(mut up) = spawned else {
            return Ok(());
        };
        if lock(&state.lineage).depth > 0 {
            return Ok(());
        }
        let mut lineage = Lineage::default();
        let home = self.options().paths.user_home.display().to_string();
        loop {
            let rules = self
                .loaded_state(up.session_id)
                .and_then(|s| {
                    lock(&s.session_rules)
                        .get(&up.agent)
                        .map(|r| r.rules().to_vec())
                })
                .unwrap_or_default();
            let mut input = crate::permissions::policy_input(
                config,
                &up.agent,
                rules,
                approvals.to_vec(),
                trusted,
                Some(home.clone()),
            );
            crate::permissions::protect_mia_home(&mut input, &self.options().paths);
            lineage.ancestors.push(Arc::new(Policy::compile(&input)));
            lineage.agents.push(up.agent.clone());
            lineage.depth += 1;
            lineage.root = Some(up.session_id);
            let id = up.session_id;
            let parent = self.store().call(move |db| db.get_session(&id)).await?;
            match parent.spawned_by {
                Some(next) if lineage.depth < 8 => up = next,
                _ => break,
            }
        }
        *lock(&state.lineage) = lineage;
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
        self.store()
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
