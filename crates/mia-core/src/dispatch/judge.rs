//! Stage "judge" of a call: the rules' decision for every target (the
//! strictest wins; a command that would run outside the OS sandbox asks
//! first), plugins that may tighten it, and a person when it asks.

use mia_config::HookEvent;
use mia_permission::{Decision, PermissionAction};

use crate::hooks::HookPermission;
use mia_protocol::{Event, PermissionNote, PermissionReplyKind, Resolution, TurnEnd};

use super::{CallEnv, CallSite, DOOM_LOOP, Outcome, gate, reply_option};
use crate::runtime::Runtime;
use crate::{CoreError, permissions};

/// How judging a call ended.
pub(super) enum Judged {
    /// The call does not run; it was recorded (`Some(end)` ends the turn).
    Settled(Option<TurnEnd>),
    /// The call may run.
    Cleared(Cleared),
}

/// What a cleared call carries to its result.
#[derive(Default)]
pub(super) struct Cleared {
    /// How a person answered, when one was asked.
    pub(super) permission: Option<PermissionNote>,
    /// An "always" answer reaches the model as a note with the result (the
    /// system prompt stays as it was: providers cache its prefix).
    pub(super) rule_note: Option<String>,
}

impl Runtime {
    pub(super) async fn judge_call(
        &self,
        site: &CallSite<'_>,
        env: CallEnv<'_>,
        plan: &mia_tools::ToolPlan,
        doom_loop: bool,
    ) -> Result<Judged, CoreError> {
        let Some(decision) = self.decide(site, env, plan).await else {
            return Ok(Judged::Settled(None));
        };
        let mut needs_ask = decision.decision == PermissionAction::Ask
            || (decision.decision == PermissionAction::Allow && doom_loop);
        // PreToolUse hooks: deny or ask tighten; allow answers an ask the
        // rules would put to a person, never an invariant's or the floor's.
        // A headless run's unanswerable ask is a denial the hook may answer.
        let unanswered = decision.unanswered.is_some();
        if (decision.decision != PermissionAction::Deny || unanswered)
            && env.hooks.has(HookEvent::PreToolUse)
        {
            match self.pre_tool_hooks(site, env).await {
                PreTool::Deny(msg) => {
                    self.deny(site, "hook", msg).await?;
                    return Ok(Judged::Settled(None));
                }
                PreTool::Stop(msg) => {
                    self.deny(site, "hook", msg).await?;
                    return Ok(Judged::Settled(Some(TurnEnd::Blocked)));
                }
                PreTool::Ask if !self.inner.opts.interactive => {
                    let msg = "Permission denied: a PreToolUse hook asks, and nobody can answer in a headless run".to_string();
                    self.deny(site, "hook", msg).await?;
                    return Ok(Judged::Settled(None));
                }
                PreTool::Ask => needs_ask = true,
                PreTool::Allow if unanswered && liftable(&decision) => {
                    return Ok(Judged::Cleared(Cleared::default()));
                }
                PreTool::Allow if needs_ask && !doom_loop && liftable(&decision) => {
                    needs_ask = false;
                }
                PreTool::Allow | PreTool::Nothing => {}
            }
        }
        // Plugins may tighten (never loosen) what the rules decided.
        if decision.decision != PermissionAction::Deny && !env.plugins.hooked.is_empty() {
            let current = if needs_ask { "ask" } else { "allow" };
            if let Some((action, plugin, reason)) = self
                .plugin_permission(
                    env.plugins,
                    &plan.permission,
                    &joined_targets(plan),
                    &site.call.name,
                    current,
                )
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
                    self.deny(site, &format!("plugin {plugin}"), msg).await?;
                    return Ok(Judged::Settled(None));
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
            self.deny(site, by, msg).await?;
            return Ok(Judged::Settled(None));
        }
        if !needs_ask {
            return Ok(Judged::Cleared(Cleared::default()));
        }
        self.ask_person(site, &decision, doom_loop).await
    }

    /// Every target's decision, audited; the strictest first.
    async fn decide(
        &self,
        site: &CallSite<'_>,
        env: CallEnv<'_>,
        plan: &mia_tools::ToolPlan,
    ) -> Option<Decision> {
        let call = site.call;
        let mut decisions: Vec<Decision> = self
            .inner
            .tools
            .unconfined(&call.name, &call.input, site.ctx)
            .map(|u| {
                let subagent = site.state.lineage().depth > 0;
                crate::sandbox::escape_decision(
                    env.checker,
                    &call.input,
                    &u,
                    &site.ctx.sandbox,
                    subagent,
                )
            })
            .into_iter()
            .collect();
        decisions.extend(plan.targets.iter().map(|t| {
            env.checker
                .check(&permissions::request_for(&plan.permission, t))
        }));
        self.audit(site.session_id, site.agent, &decisions).await;
        decisions.sort_by_key(|d| std::cmp::Reverse(d.decision));
        decisions.into_iter().next()
    }

    /// The call does not run: the denial goes back to the model as an error
    /// result, stored with who settled it.
    async fn deny(&self, site: &CallSite<'_>, by: &str, msg: String) -> Result<(), CoreError> {
        self.emit(Event::PermissionResolved {
            session_id: site.session_id,
            request_id: site.call.id.clone(),
            decision: Resolution::Deny,
            by: by.into(),
            reason: msg.clone(),
            root_session_id: site.state.lineage().root,
        });
        let note = PermissionNote {
            decision: Resolution::Deny,
            by: by.into(),
            reply: None,
            reason: msg.clone(),
        };
        self.record(site, Outcome::refused(msg), Vec::new(), Some(note), None)
            .await
    }

    /// Ask a person and wait for the answer through the session's gate.
    async fn ask_person(
        &self,
        site: &CallSite<'_>,
        decision: &Decision,
        doom_loop: bool,
    ) -> Result<Judged, CoreError> {
        let request_id = format!("perm-{}", mia_protocol::PartId::new());
        let request = self.ask_request(site, decision, doom_loop, &request_id);
        let gate = gate::SessionGate {
            runtime: self,
            state: site.state,
        };
        let Some(reply) = gate::PermissionGate::ask(&gate, request, &site.ctx.cancel).await else {
            // Stopped while the ask was open: the card says so.
            let end = self.record_stopped(site, Vec::new(), None).await?;
            return Ok(Judged::Settled(end));
        };
        let outcome = if decision.decision == PermissionAction::Ask {
            mia_permission::apply_reply(decision, permissions::engine_reply(&reply))
                .map_err(|e| CoreError::Invalid(e.to_string()))?
        } else {
            doom_loop_outcome(&reply)
        };
        self.keep_answer(site.state, site.agent, site.session_id, &outcome)
            .await?;
        let decided = Resolution::allowed(outcome.proceed);
        self.emit(Event::PermissionResolved {
            session_id: site.session_id,
            request_id,
            decision: decided,
            by: "user".into(),
            reason: outcome.message_to_model.clone().unwrap_or_default(),
            root_session_id: site.state.lineage().root,
        });
        let note = PermissionNote {
            decision: decided,
            by: "user".into(),
            reply: Some(reply_option(&reply)),
            reason: match &reply {
                PermissionReplyKind::RejectWithFeedback { feedback } => feedback.clone(),
                _ => String::new(),
            },
        };
        if !outcome.proceed {
            let msg = outcome
                .message_to_model
                .unwrap_or_else(|| "Permission denied by the user".into());
            self.record(site, Outcome::refused(msg), Vec::new(), Some(note), None)
                .await?;
            return Ok(Judged::Settled(None));
        }
        // The hosts this ask was about are allowed for this call: its
        // proxy does not ask about them again.
        if let Some(gate) = &site.ctx.network {
            let hosts: Vec<String> = decision
                .always
                .iter()
                .filter(|r| r.permission == "fetch")
                .filter_map(|r| r.pattern.as_deref())
                .map(|p| p.replace('\\', ""))
                .collect();
            gate.0.preapprove(&hosts);
        }
        Ok(Judged::Cleared(Cleared {
            permission: Some(note),
            rule_note: rule_note(&outcome.session_rules, "session")
                .or_else(|| rule_note(&outcome.project_rules, "project")),
        }))
    }

    /// The dialog's payload: whose tool, what a write would change, the
    /// session the user started, why a repeated call asks.
    fn ask_request(
        &self,
        site: &CallSite<'_>,
        decision: &Decision,
        doom_loop: bool,
        request_id: &str,
    ) -> mia_protocol::PermissionRequest {
        let (call, ctx) = (site.call, site.ctx);
        let registry = &self.inner.tools;
        let mut request = permissions::dialog(
            request_id.to_string(),
            site.session_id,
            site.agent,
            &call.name,
            &call.input,
            decision,
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
        request.root_session_id = site.state.lineage().root;
        if doom_loop {
            request.reason = format!(
                "{} has been called {DOOM_LOOP} times in a row with the same arguments; it may be stuck in a loop",
                call.name
            );
        }
        request
    }
}

/// What the `PreToolUse` hooks said about a call.
enum PreTool {
    Nothing,
    Allow,
    Ask,
    /// Denied (exit 2, `decision: "block"`, `permissionDecision: "deny"`): the reason.
    Deny(String),
    /// `continue: false`: the call does not run and the turn ends.
    Stop(String),
}

impl Runtime {
    async fn pre_tool_hooks(&self, site: &CallSite<'_>, env: CallEnv<'_>) -> PreTool {
        let call = site.call;
        let hook_site = crate::hooks::HookSite {
            config: env.config,
            dir: &site.state.directory,
            session_id: site.session_id,
            call_id: Some(&call.id),
        };
        let input = serde_json::json!({
            "tool_name": crate::hooks::claude_tool_name(&call.name),
            "tool_input": crate::hooks::hook_tool_input(&call.name, &call.input, &site.ctx.project_root),
            "tool_use_id": call.id,
            "permission_mode": "default",
        });
        let v = self
            .run_hooks(
                env.hooks,
                &hook_site,
                HookEvent::PreToolUse,
                Some(&call.name),
                input,
            )
            .await;
        site.hook_runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(v.runs);
        if let Some(why) = v.stop {
            return PreTool::Stop(format!("A PreToolUse hook stopped the turn: {why}"));
        }
        if let Some(why) = v.block {
            return PreTool::Deny(format!("A PreToolUse hook blocked this call: {why}"));
        }
        match v.permission {
            Some((HookPermission::Deny, why)) => PreTool::Deny(if why.is_empty() {
                "A PreToolUse hook denied this call".into()
            } else {
                format!("A PreToolUse hook denied this call: {why}")
            }),
            Some((HookPermission::Ask, _)) => PreTool::Ask,
            Some((HookPermission::Allow, _)) => PreTool::Allow,
            None => PreTool::Nothing,
        }
    }
}

/// Whether an ask may be answered by a hook's `allow`: one a person could
/// answer with "always" (so not an invariant's, the engine's own
/// no-"always" asks or the agent's floor).
fn liftable(d: &Decision) -> bool {
    use mia_permission::Layer;
    let hard = |m: &Option<mia_permission::Matched>| {
        m.as_ref()
            .is_some_and(|m| matches!(m.layer, Layer::Invariant | Layer::AgentRestriction))
    };
    let always = d.unanswered.as_ref().unwrap_or(&d.always);
    !always.is_empty() && !hard(&d.matched) && !d.segments.iter().any(|s| hard(&s.matched))
}

/// A doom-loop confirmation of an allowed call.
fn doom_loop_outcome(reply: &PermissionReplyKind) -> mia_permission::ReplyOutcome {
    mia_permission::ReplyOutcome {
        proceed: matches!(
            reply,
            PermissionReplyKind::Once | PermissionReplyKind::Session | PermissionReplyKind::Project
        ),
        message_to_model: match reply {
            PermissionReplyKind::RejectWithFeedback { feedback } => Some(feedback.clone()),
            _ => Some("The user stopped this repeated call.".into()),
        },
        ..Default::default()
    }
}

/// "[Permission note: the user allowed `bash: git *` for the rest of this session.]"
fn rule_note(rules: &[mia_permission::PermissionRule], scope: &str) -> Option<String> {
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
}

/// A plan's targets as one line, for plugins' permission hooks.
fn joined_targets(plan: &mia_tools::ToolPlan) -> String {
    plan.targets
        .iter()
        .map(|t| match t {
            mia_tools::Target::Path(p) => p.display().to_string(),
            mia_tools::Target::Command(c)
            | mia_tools::Target::Url(c)
            | mia_tools::Target::Text(c) => c.clone(),
            mia_tools::Target::None => String::new(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
