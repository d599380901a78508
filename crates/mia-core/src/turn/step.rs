//! One step of a turn: the permission policy (recompiled only when the
//! session's rules changed), the tools offered and the system prompt, the
//! history, the streamed answer, and its tool calls.

use std::sync::Arc;

use mia_permission::{Checker, PermissionRule};
use mia_protocol::{Event, MessageId, MessageMetadata, NewMessage, PartContent, Role, TurnEnd};
use mia_providers::{ChatRequest, ToolDefinition};
use tokio_util::sync::CancellationToken;

use crate::dispatch::DOOM_LOOP;
use crate::runtime::{Runtime, lock};
use crate::session::SessionState;
use crate::turn::setup::TurnSetup;
use crate::turn::{TurnTotals, session_date};
use crate::{CoreError, permissions, prompt};

impl Runtime {
    /// Run one step; `Some(end)` ends the turn.
    #[allow(clippy::too_many_lines)]
    pub(crate) async fn run_step(
        &self,
        state: &Arc<SessionState>,
        t: &mut TurnSetup,
        cancel: &CancellationToken,
        totals: &mut TurnTotals,
    ) -> Result<Option<TurnEnd>, CoreError> {
        let opts = &self.inner.opts;
        let session_id = lock(&state.session).id;

        // Recompile the policy only when the session's rules changed
        // (an "always"/"never" answer); compiling costs milliseconds.
        let mut session_rules: Vec<PermissionRule> = lock(&state.session_rules)
            .get(&t.agent_name)
            .map(|r| r.rules().to_vec())
            .unwrap_or_default();
        session_rules.extend(opts.allow.iter().cloned());
        let approvals_now: Vec<PermissionRule> = lock(&state.new_approvals)
            .iter()
            .filter(|(agent, _)| *agent == t.agent_name)
            .map(|(_, r)| r.clone())
            .collect();
        if !approvals_now.is_empty() || !lock(&state.new_approvals).is_empty() {
            t.approvals.extend(approvals_now);
            lock(&state.new_approvals).clear();
            t.policy_cache = None;
        }
        if t.policy_cache
            .as_ref()
            .is_none_or(|(rules, _)| *rules != session_rules)
        {
            let mut input = permissions::policy_input(
                &t.config,
                &t.agent_name,
                session_rules.clone(),
                t.approvals.clone(),
                t.trusted,
                Some(t.home.display().to_string()),
            );
            permissions::protect_mia_home(&mut input, &opts.paths);
            t.policy_cache = Some((
                session_rules,
                Arc::new(mia_permission::Policy::compile(&input)),
            ));
        }
        self.ensure_lineage(state, &t.config, &t.approvals, t.trusted)
            .await?;
        let lineage = lock(&state.lineage).clone();
        let Some((_, policy_arc)) = t.policy_cache.as_ref() else {
            return Err(CoreError::Internal("no permission policy".into()));
        };
        let policy_arc = policy_arc.clone();
        let policy: &mia_permission::Policy = &policy_arc;
        // A subagent's checks intersect with every ancestor's (strictest wins).
        let mut checker = Checker::new(policy, &t.path_ctx)
            .with_answerer(t.answerer)
            .with_shell_dialect(crate::permissions::shell_dialect());
        for p in &lineage.ancestors {
            checker = checker.with_parent(p);
        }

        // Tools that read many files (grep, glob) skip what the read rules
        // refuse; the same policy as every other check this step.
        // Only when some rule restricts reads: judging every file of a big
        // tree costs a path check each.
        let restricts_reads = policy.read_restricted_under(&t.path_ctx.root.to_string_lossy());
        t.tool_ctx.read_only_shell = !crate::permissions::tool_offered(&checker, "edit")
            && !crate::permissions::tool_offered(&checker, "write");
        // The OS sandbox for this agent's commands; with it confining them,
        // commands need no confirmation only for not being plain words.
        let sandbox_policy = crate::sandbox::policy(
            &t.config,
            &t.agent_name,
            t.tool_ctx.read_only_shell,
            &t.path_ctx.root,
            &opts.paths,
            mia_sandbox::session_tmp(&session_id.to_string()),
        );
        t.tool_ctx.sandbox =
            crate::sandbox::shell_sandbox(sandbox_policy, t.tool_ctx.read_only_shell);
        // A sandboxed command's connections are judged here (its proxy asks).
        let net_gate = match &t.tool_ctx.sandbox {
            mia_tools::ShellSandbox::Confined { policy: sp, .. } if sp.network.proxied() => {
                Some(Arc::new(crate::dispatch::network::StepNetGate {
                    runtime: self.clone(),
                    state: state.clone(),
                    session_id,
                    agent: t.agent_name.clone(),
                    policy: policy_arc.clone(),
                    ancestors: lineage.ancestors.clone(),
                    path_ctx: t.path_ctx.clone(),
                    answerer: t.answerer,
                    mode: sp.network,
                    cancel: cancel.clone(),
                    answered: Default::default(),
                }))
            }
            _ => None,
        };
        // Only the full wall stands in for plain words; under the fallback
        // the engine asks as if there were none.
        let checker = crate::sandbox::Wall::of(&t.tool_ctx.sandbox).apply(checker);
        // The project's MCP servers' tools (its own servers only in a trusted
        // workspace): started at the first step, the same set at the next
        // unless a server said its list changed.
        let mcp = self.mcp_tools(&t.path_ctx.root, &t.config, t.trusted).await;
        let (mut extra, plugins) = self
            .plugin_tools(&t.path_ctx.root, &t.config, t.trusted)
            .await;
        for (name, tool) in mcp.0.iter() {
            extra.insert(name.clone(), tool.clone());
        }
        t.tool_ctx.extra_tools = mia_tools::ExtraTools(Arc::new(extra));
        t.plugins = plugins;
        t.tool_ctx.read_filter = None;
        if restricts_reads {
            let policy = policy_arc.clone();
            let path_ctx = t.path_ctx.clone();
            t.tool_ctx.read_filter = Some(mia_tools::ReadFilter(Arc::new(move |path| {
                let checker = Checker::new(&policy, &path_ctx);
                let d = checker.check(&mia_permission::Request::path(
                    "read",
                    &path.display().to_string(),
                ));
                // The rule, not the file: a denied file's name stays unsaid.
                (!d.is_allowed()).then(|| match d.reason.split_once("(matched rule: ") {
                    Some((_, rule)) => format!("rule {}", rule.trim_end_matches(')')),
                    None => "a read rule".to_string(),
                })
            })));
        }
        if t.prompt_policy.is_none() {
            let mut input = permissions::policy_input(
                &t.config,
                &t.agent_name,
                opts.allow.clone(),
                Vec::new(),
                t.trusted,
                Some(t.home.display().to_string()),
            );
            permissions::protect_mia_home(&mut input, &opts.paths);
            t.prompt_policy = Some(mia_permission::Policy::compile(&input));
        }
        let Some(prompt_policy) = t.prompt_policy.as_ref() else {
            return Err(CoreError::Internal("no permission policy".into()));
        };
        let mut prompt_checker = Checker::new(prompt_policy, &t.path_ctx)
            .with_answerer(t.answerer)
            .with_shell_dialect(crate::permissions::shell_dialect());
        for p in &lineage.ancestors {
            prompt_checker = prompt_checker.with_parent(p);
        }
        // `task` is offered while delegation may go deeper and someone can be called.
        let agents = crate::agents::Agents::from_config(&t.config);
        let callable = crate::delegate::callable(&agents, &t.agent_name, &lineage);
        let offer_task = lineage.depth < crate::delegate::MAX_DEPTH && !callable.is_empty();
        let task_description = crate::delegate::task_description(&callable);
        let (tools, permission_summary) = {
            let tools: Vec<ToolDefinition> = self
                .inner
                .tools
                .specs()
                .into_iter()
                // MCP servers' and plugins' tools, in name order (the prompt
                // prefix must not change between steps).
                .chain(t.tool_ctx.extra_tools.0.values().map(|tool| tool.spec()))
                .filter(|s| {
                    // A plugin tool is judged under the permission it
                    // declares, which need not be its name.
                    let declared = t
                        .tool_ctx
                        .extra_tools
                        .0
                        .get(s.name.as_ref())
                        .and_then(|tool| {
                            tool.plan(&serde_json::Value::Object(Default::default()), &t.tool_ctx)
                                .ok()
                        })
                        .map(|plan| plan.permission);
                    let perm = match &declared {
                        Some(p) => p.as_str(),
                        None if s.name == "todo" => "todo_create",
                        None => s.name.as_ref(),
                    };
                    (s.name != "task" || offer_task)
                        && permissions::tool_offered(&prompt_checker, perm)
                })
                .map(|s| ToolDefinition {
                    name: s.name.to_string(),
                    description: if s.name == "task" {
                        task_description.clone()
                    } else {
                        s.description.to_string()
                    },
                    input_schema: s.input_schema,
                })
                .collect();
            (tools, permissions::summary(&prompt_checker))
        };
        let tool_lines = tools
            .iter()
            .map(|t| format!("- {}: {}", t.name, t.description))
            .collect::<Vec<_>>()
            .join("\n");
        let unifier = opts.unifier.unwrap_or_else(|| {
            t.config
                .merged
                .unifier
                .as_ref()
                .and_then(|u| u.enabled)
                .unwrap_or(true)
        });
        let (system, warnings) = prompt::assemble(&prompt::PromptInputs {
            agent: &t.agent,
            project_root: &t.path_ctx.root,
            session_id: session_id.to_string(),
            datetime: session_date(lock(&state.session).created_at),
            tools: tool_lines,
            permissions: permission_summary,
            global_skills: opts.paths.global_skills_dir(),
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
        // Compaction before every request (mid-turn too): over the message
        // threshold, or when this request would fill the token budget.
        let fixed = (system.len()
            + tools
                .iter()
                .map(|d| d.description.len() + d.input_schema.to_string().len() + d.name.len())
                .sum::<usize>()) as u64
            / 4;
        let messages = self
            .compact_before_request(
                state,
                &t.config,
                &t.model,
                &mut t.compaction_failed,
                fixed,
                messages,
                cancel,
            )
            .await?;
        // The composer's context meter: this request, as estimated.
        let usage = {
            let visible: Vec<&mia_protocol::Message> = messages.iter().collect();
            let mut est = lock(&state.estimates);
            crate::compaction::context_usage(&t.config, &t.model, &visible, Some(fixed), &mut est)
        };
        *lock(&state.last_context) = Some(usage.clone());
        self.emit(Event::ContextUsage { session_id, usage });
        let mut request = ChatRequest::new(
            t.wire_model.clone(),
            mia_providers::convert::history_to_messages(&messages),
        );
        request.system = system;
        request.tools = tools;
        request.temperature = t.agent.temperature.map(|t| t as f32);
        self.plugin_chat_params(&t.plugins, &t.agent_name, &mut request)
            .await;

        // The id exists from the first delta; the message is stored when
        // its stream ends (one commit), partial output included.
        let message_id = MessageId::new();
        self.emit(Event::StepStarted {
            session_id,
            message_id,
            agent: t.agent_name.clone(),
            model: t.model.to_string(),
        });

        let crate::turn::stream::Streamed {
            completion,
            failure,
            started,
        } = self
            .stream_step(&t.provider, request, cancel, session_id, message_id)
            .await;

        // The provider says the request does not fit: compact, then send
        // again once (never in a loop), unless compaction is off.
        if let Some(mia_providers::ProviderError::ContextTooLong { .. }) = &failure
            && completion.text.is_empty()
            && completion.tool_calls.is_empty()
            && !cancel.is_cancelled()
            && !t.overflow_retried
            && crate::compaction::Settings::from_config(&t.config).automatic()
        {
            t.overflow_retried = true;
            if self
                .compact_claimed(
                    state,
                    &t.config,
                    crate::compaction::Trigger::Overflow,
                    Some(&t.model),
                    cancel,
                )
                .await
                .is_ok()
            {
                return Ok(None);
            }
        }
        let failure = failure.map(|e| match e {
            mia_providers::ProviderError::ContextTooLong { provider, message } => {
                let advice = crate::compaction::overflow_advice(
                    &crate::compaction::Settings::from_config(&t.config),
                    session_id,
                );
                mia_providers::ProviderError::ContextTooLong {
                    provider,
                    message: format!("{message}. {advice}"),
                }
            }
            other => other,
        });

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
        totals.add(&usage, t.catalog.cost(&t.model, &usage));
        let metadata = MessageMetadata {
            agent: Some(t.agent_name.clone()),
            model: Some(t.model.to_string()),
            tokens: completion.usage,
            cost_usd: t.catalog.cost(&t.model, &usage),
            duration_ms: Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
            extra: [(
                "model_source".to_string(),
                serde_json::Value::from(t.model_source),
            )]
            .into_iter()
            .collect(),
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
            return Ok(Some(TurnEnd::Cancelled));
        }
        if let Some(e) = failure {
            self.emit(Event::Error {
                session_id: Some(session_id),
                kind: e.kind().to_string(),
                message: e.to_string(),
                retryable: e.is_retryable(),
            });
            return Ok(Some(TurnEnd::Error));
        }
        if calls.is_empty() {
            return Ok(Some(TurnEnd::Completed));
        }

        // What a `task` call needs from this step (only when there is one:
        // it clones the config and the compiled policy).
        if calls.iter().any(|c| c.name == "task") {
            *lock(&state.step_context) = Some(crate::delegate::StepContext {
                config: t.config.clone(),
                model: t.model.clone(),
                agent: t.agent_name.clone(),
                policy: policy_arc.clone(),
            });
        }
        // Several `task` calls in one step run concurrently (each waits for
        // one of the session's subagent slots); everything else in order.
        let tasks: Vec<&mia_providers::ToolCall> =
            calls.iter().filter(|c| c.name == "task").collect();
        if tasks.len() > 1 && tasks.len() == calls.len() {
            let runs = tasks.iter().map(|call| {
                self.run_tool(
                    state,
                    &checker,
                    &t.agent_name,
                    session_id,
                    message_id,
                    call,
                    &t.tool_ctx,
                    false,
                    t.snapshot_config.as_ref(),
                    &t.plugins,
                )
            });
            let ends = futures_util::future::join_all(runs).await;
            for end in ends {
                if let Some(end) = end? {
                    return Ok(Some(end));
                }
            }
            return Ok(None);
        }
        for call in calls {
            if cancel.is_cancelled() {
                return Ok(Some(TurnEnd::Cancelled));
            }
            let key = (call.name.clone(), call.input.to_string());
            t.recent_calls.push(key.clone());
            let repeats = t
                .recent_calls
                .iter()
                .rev()
                .take_while(|k| **k == key)
                .count();
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
                return Ok(Some(TurnEnd::Blocked));
            }
            // The call's own gate, so its network asks show on its card.
            let call_ctx = net_gate.as_ref().map(|g| {
                let mut c = t.tool_ctx.clone();
                c.network = Some(g.for_call(&call));
                c
            });
            let end = self
                .run_tool(
                    state,
                    &checker,
                    &t.agent_name,
                    session_id,
                    message_id,
                    &call,
                    call_ctx.as_ref().unwrap_or(&t.tool_ctx),
                    doom_loop,
                    t.snapshot_config.as_ref(),
                    &t.plugins,
                )
                .await?;
            if let Some(end) = end {
                return Ok(Some(end));
            }
        }
        Ok(None)
    }
}
