//! One tool call: doom-loop guard → plan → permission (deny, or ask and
//! wait for the answer through the session's gate) → snapshot → run → record.

mod gate;
pub(crate) mod network;

use std::sync::Arc;
use std::time::Instant;

use mia_permission::{Checker, PermissionAction};
use mia_protocol::{Event, MessageId, PartContent, PermissionReplyKind, SessionId, TurnEnd};
use mia_tools::ToolContext;
use tokio::sync::oneshot;

use crate::runtime::{Runtime, lock};
use crate::session::SessionState;
use crate::snapshots::SnapFail;
use crate::{CoreError, permissions};

/// The same tool call with identical arguments this many times in a row is a doom loop.
pub(crate) const DOOM_LOOP: usize = 3;

impl Runtime {
    pub(crate) async fn record_result(
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

    /// A call Stop kept from running: its card says so, and the turn ends.
    pub(crate) async fn record_stopped(
        &self,
        session_id: SessionId,
        message_id: MessageId,
        call: &mia_providers::ToolCall,
        before: Vec<PartContent>,
        permission: Option<mia_protocol::PermissionNote>,
    ) -> Result<Option<TurnEnd>, CoreError> {
        self.record_with(
            session_id,
            message_id,
            call,
            "Stopped before it ran.".into(),
            true,
            0,
            before,
            permission,
        )
        .await?;
        Ok(Some(TurnEnd::Cancelled))
    }

    /// A call that was not run: its denial goes back to the model as an error
    /// result, stored with how the permission was settled.
    pub(crate) async fn record_denied(
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
    pub(crate) async fn record_with(
        &self,
        session_id: SessionId,
        message_id: MessageId,
        call: &mia_providers::ToolCall,
        output: String,
        is_error: bool,
        duration_ms: u64,
        before: Vec<PartContent>,
        permission: Option<mia_protocol::PermissionNote>,
    ) -> Result<(), CoreError> {
        self.record_ran(
            session_id,
            message_id,
            call,
            (output, is_error, duration_ms),
            before,
            permission,
            None,
        )
        .await
    }

    /// [`Self::record_with`] for a call that ran, with how the OS sandbox
    /// confined it (shell commands).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn record_ran(
        &self,
        session_id: SessionId,
        message_id: MessageId,
        call: &mia_providers::ToolCall,
        (output, is_error, duration_ms): (String, bool, u64),
        mut before: Vec<PartContent>,
        permission: Option<mia_protocol::PermissionNote>,
        sandbox: Option<Box<mia_protocol::SandboxNote>>,
    ) -> Result<(), CoreError> {
        before.push(PartContent::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            output: output.clone(),
            is_error,
            duration_ms: Some(duration_ms),
            permission,
            sandbox: sandbox.clone(),
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
            sandbox,
        });
        Ok(())
    }

    /// Permission → snapshot → run → record, for one call. `Some(end)` stops the turn.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run_tool(
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
        plugins: &crate::plugins::TurnPlugins,
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
        // A command that would run outside the configured OS sandbox asks
        // first (listed first, so its reason is the one shown).
        let mut decisions: Vec<mia_permission::Decision> = registry
            .unconfined(&call.name, &call.input, ctx)
            .map(|u| {
                let subagent = lock(&state.lineage).depth > 0;
                crate::sandbox::escape_decision(checker, &call.input, &u, &ctx.sandbox, subagent)
            })
            .into_iter()
            .collect();
        decisions.extend(
            plan.targets
                .iter()
                .map(|t| checker.check(&permissions::request_for(&plan.permission, t))),
        );
        self.audit(session_id, agent, &decisions).await;
        decisions.sort_by_key(|d| std::cmp::Reverse(d.decision));
        let Some(decision) = decisions.into_iter().next() else {
            return Ok(None);
        };
        let mut needs_ask = decision.decision == PermissionAction::Ask;
        if decision.decision == PermissionAction::Allow && doom_loop {
            needs_ask = true;
        }
        // Plugins may tighten (never loosen) what the rules decided.
        if decision.decision != PermissionAction::Deny && !plugins.hooked.is_empty() {
            let target = plan
                .targets
                .iter()
                .map(|t| match t {
                    mia_tools::Target::Path(p) => p.display().to_string(),
                    mia_tools::Target::Command(c)
                    | mia_tools::Target::Url(c)
                    | mia_tools::Target::Text(c) => c.clone(),
                    mia_tools::Target::None => String::new(),
                })
                .collect::<Vec<_>>()
                .join(" ");
            let current = if needs_ask { "ask" } else { "allow" };
            if let Some((action, plugin, reason)) = self
                .plugin_permission(plugins, &plan.permission, &target, &call.name, current)
                .await
            {
                if action == "deny" {
                    let msg = format!(
                        "Permission denied by plugin {plugin}{}",
                        if reason.is_empty() {
                            String::new()
                        } else {
                            format!(": {reason}")
                        }
                    );
                    self.emit(Event::PermissionResolved {
                        session_id,
                        request_id: call.id.clone(),
                        decision: "deny".into(),
                        by: format!("plugin {plugin}"),
                        reason: msg.clone(),
                        root_session_id: lock(&state.lineage).root,
                    });
                    let note = mia_protocol::PermissionNote {
                        decision: "deny".into(),
                        by: format!("plugin {plugin}"),
                        reply: None,
                        reason: msg.clone(),
                    };
                    self.record_denied(session_id, message_id, call, msg, note)
                        .await?;
                    return Ok(None);
                }
                needs_ask = true;
            }
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
                root_session_id: lock(&state.lineage).root,
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
        // An "always" answer reaches the model as a note with the result
        // (the system prompt stays as it was: providers cache its prefix).
        let mut rule_note: Option<String> = None;
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
            // A tool of an MCP server or a plugin: the dialog says whose.
            if let Some(origin) = registry.get_with(&call.name, ctx).and_then(|t| t.origin()) {
                request.target = origin;
            }
            // What a write or an edit would change, shown in the dialog.
            request.proposed = registry
                .proposed(&call.name, &call.input, ctx)
                .map(|p| mia_snapshot::proposed_diff(&p.path, p.before.as_deref(), &p.after));
            // A subagent's ask shows in the session the user started too.
            request.root_session_id = lock(&state.lineage).root;
            if doom_loop {
                request.reason = format!(
                    "{} has been called {DOOM_LOOP} times in a row with the same arguments; it may be stuck in a loop",
                    call.name
                );
            }
            let gate = gate::SessionGate {
                runtime: self,
                state,
            };
            let reply = gate::PermissionGate::ask(&gate, request, &ctx.cancel).await;
            let Some(reply) = reply else {
                // Stopped while the ask was open: the card says so.
                return self
                    .record_stopped(session_id, message_id, call, Vec::new(), None)
                    .await;
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
            self.keep_answer(state, agent, session_id, &outcome).await?;
            let decided = if outcome.proceed { "allow" } else { "deny" };
            self.emit(Event::PermissionResolved {
                session_id,
                request_id,
                decision: decided.into(),
                by: "user".into(),
                reason: outcome.message_to_model.clone().unwrap_or_default(),
                root_session_id: lock(&state.lineage).root,
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
            // The hosts this ask was about are allowed for this call: its
            // proxy does not ask about them again.
            if let Some(gate) = &ctx.network {
                let hosts: Vec<String> = decision
                    .always
                    .iter()
                    .filter(|r| r.permission == "fetch")
                    .filter_map(|r| r.pattern.as_deref())
                    .map(|p| p.replace('\\', ""))
                    .collect();
                gate.0.preapprove(&hosts);
            }
            let scoped = |rules: &[mia_permission::PermissionRule], scope: &str| {
                (!rules.is_empty()).then(|| {
                    format!(
                        "[Permission note: the user allowed {} for the rest of this {scope}.]",
                        rules
                            .iter()
                            .map(|r| format!("`{r}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            };
            rule_note = scoped(&outcome.session_rules, "session")
                .or_else(|| scoped(&outcome.project_rules, "project"));
        }

        // Plugins' tool.execute.before: a veto stops the call here; notes
        // go with the result. Arguments are never changed.
        let (veto, mut plugin_notes) = if plugins.hooked.is_empty() {
            (None, Vec::new())
        } else {
            self.plugin_before(
                plugins,
                &call.name,
                &call.input,
                &session_id.to_string(),
                &call.id,
            )
            .await
        };
        if let Some(why) = veto {
            self.record_result(session_id, message_id, call, why, true, 0)
                .await?;
            return Ok(None);
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
                        return self
                            .record_stopped(session_id, message_id, call, Vec::new(), permission_note)
                            .await;
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

        // Stop pressed after the answer, while the snapshot was taken: the
        // call does not run (its step is closed with no change).
        if ctx.cancel.is_cancelled() {
            let mut parts = Vec::new();
            if let Some(pending) = pending {
                let (part, event) = self
                    .finish_snapshot(state, session_id, &call.id, pending)
                    .await;
                parts.push(part);
                self.emit(event);
            }
            return self
                .record_stopped(session_id, message_id, call, parts, permission_note)
                .await;
        }
        let started = Instant::now();
        let tool = registry.get_with(&call.name, ctx);
        let result = match tool {
            // A subagent runs in its own session (delegate.rs).
            Some(_) if call.name == "task" => match self.delegate(state, call, ctx).await {
                Ok((output, failed)) => Ok(mia_tools::ToolOutput {
                    output,
                    metadata: serde_json::json!({ "subagent_failed": failed }),
                }),
                Err(e) => Err(mia_tools::ToolError::Invalid(e.to_string())),
            },
            Some(t) => {
                // The call's output, live, to every subscriber.
                let mut live_ctx = ctx.clone();
                let rt = self.clone();
                let call_id = call.id.clone();
                live_ctx.progress = Some(mia_tools::Progress(Arc::new(move |text: &str| {
                    rt.emit(Event::ToolOutput {
                        session_id,
                        message_id,
                        call_id: call_id.clone(),
                        text: text.to_string(),
                    });
                })));
                t.run(call.input.clone(), &live_ctx).await
            }
            None => Err(mia_tools::ToolError::Invalid(format!(
                "unknown tool {}",
                call.name
            ))),
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut sandbox_note = None;
        // Images and links an MCP server returned, for the UI.
        let rich: Vec<mia_protocol::ResultContent> = match &result {
            Ok(out) => out
                .metadata
                .get("content")
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        // Every file a sandboxed command changed, traced by the kernel.
        let mut written: Option<Vec<std::path::PathBuf>> = None;
        let (output, is_error) = match result {
            // A command stopped by a timeout or a cancel did not do its job: shown as failed.
            Ok(out) => {
                let stopped = out.metadata.get("cancelled") == Some(&serde_json::Value::Bool(true))
                    || out.metadata.get("timed_out") == Some(&serde_json::Value::Bool(true))
                    || out.metadata.get("subagent_failed") == Some(&serde_json::Value::Bool(true));
                sandbox_note = out
                    .metadata
                    .get("sandbox")
                    .and_then(|v| serde_json::from_value(v.clone()).ok());
                written = crate::snapshots::traced_writes(&out.metadata);
                (out.output, stopped)
            }
            Err(e) => (e.to_string(), true),
        };
        if !plugins.hooked.is_empty() {
            plugin_notes.extend(
                self.plugin_after(plugins, &call.name, &call.input, &output, is_error)
                    .await,
            );
        }
        let output = if plugin_notes.is_empty() {
            output
        } else {
            format!("{output}\n\n{}", plugin_notes.join("\n"))
        };
        let output = match rule_note {
            Some(note) => format!("{output}\n\n{note}"),
            None => output,
        };

        let pending = pending.map(|p| {
            p.map(|mut p| {
                p.written = written;
                p
            })
        });
        let mut parts = Vec::new();
        if let Some(pending) = pending {
            let (part, event) = self
                .finish_snapshot(state, session_id, &call.id, pending)
                .await;
            parts.push(part);
            self.emit(event);
        }
        if !rich.is_empty() {
            self.emit(Event::ToolContent {
                session_id,
                message_id,
                call_id: call.id.clone(),
                items: rich.clone(),
            });
            parts.push(PartContent::ToolContent {
                call_id: call.id.clone(),
                items: rich,
            });
        }
        self.record_ran(
            session_id,
            message_id,
            call,
            (output, is_error, duration_ms),
            parts,
            permission_note,
            sandbox_note,
        )
        .await?;
        if ctx.cancel.is_cancelled() {
            return Ok(Some(TurnEnd::Cancelled));
        }
        Ok(None)
    }

    /// Keep what an answer said for later: "always" rules for the session,
    /// "always for this project" approvals in the store.
    pub(crate) async fn keep_answer(
        &self,
        state: &Arc<SessionState>,
        agent: &str,
        session_id: SessionId,
        outcome: &mia_permission::ReplyOutcome,
    ) -> Result<(), CoreError> {
        lock(&state.session_rules)
            .entry(agent.to_string())
            .or_default()
            .add(&outcome.session_rules);
        if !outcome.project_rules.is_empty() {
            let rules = outcome.project_rules.clone();
            let project = crate::worktrees::project_key(&state.directory);
            let session = session_id.to_string();
            let asked = agent.to_string();
            self.inner
                .store
                .call(move |db| db.add_project_approvals(&project, &asked, &rules, Some(&session)))
                .await?;
            lock(&state.new_approvals).extend(
                outcome
                    .project_rules
                    .iter()
                    .map(|r| (agent.to_string(), r.clone())),
            );
        }
        Ok(())
    }

    /// Every check is an audit record: a tracing event (deny/ask at warn,
    /// allow at debug) and a row in the store.
    pub(crate) async fn audit(
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
}

/// A permission ask waiting for its answer: the request (with the replies
/// offered) and where to send the one given.
pub(crate) type PendingAsk = (
    mia_protocol::PermissionRequest,
    oneshot::Sender<PermissionReplyKind>,
);

/// The option name of a reply, as offered in `PermissionRequest::options`.
pub(crate) fn reply_name(reply: &PermissionReplyKind) -> &'static str {
    match reply {
        PermissionReplyKind::Once => "once",
        PermissionReplyKind::Session => "session",
        PermissionReplyKind::Project => "project",
        PermissionReplyKind::Deny => "deny",
        PermissionReplyKind::Never => "never",
        PermissionReplyKind::RejectWithFeedback { .. } => "reject_with_feedback",
    }
}
