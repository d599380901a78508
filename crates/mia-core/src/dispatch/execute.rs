//! Stages "snapshot → run → record" of a call: plugins' before hook, a
//! snapshot of what the call may change (a shell command waits for
//! another one on the same work tree), the tool itself with its output
//! live, then the result stored with the snapshot and rich content.

use std::sync::Arc;
use std::time::Instant;

use mia_protocol::{Event, PartContent, TurnEnd};

use super::judge::Cleared;
use super::{CallEnv, CallSite, Outcome};
use crate::CoreError;
use crate::runtime::Runtime;
use crate::snapshots::SnapFail;

/// A snapshot begun before the call: `Err` says why none could be taken.
type Begun = Option<Result<mia_snapshot::PendingStep, String>>;

/// What a run brought besides its output.
struct Ran {
    outcome: Outcome,
    /// Images and links an MCP server returned, for the UI.
    rich: Vec<mia_protocol::ResultContent>,
    sandbox: Option<Box<mia_protocol::SandboxNote>>,
    /// Every file a sandboxed command changed, traced by the kernel.
    written: Option<Vec<std::path::PathBuf>>,
}

impl Runtime {
    pub(super) async fn execute(
        &self,
        site: &CallSite<'_>,
        env: CallEnv<'_>,
        plan: &mia_tools::ToolPlan,
        cleared: Cleared,
    ) -> Result<Option<TurnEnd>, CoreError> {
        let call = site.call;
        // Plugins' tool.execute.before: a veto stops the call here; notes
        // go with the result. Arguments are never changed.
        let (veto, mut notes) = if env.plugins.hooked.is_empty() {
            (None, Vec::new())
        } else {
            self.plugin_before(
                env.plugins,
                &call.name,
                &call.input,
                &site.session_id.to_string(),
                &call.id,
            )
            .await
        };
        if let Some(why) = veto {
            self.record(site, Outcome::refused(why), Vec::new(), None, None)
                .await?;
            return Ok(None);
        }
        let pending = match self.begin_call_snapshot(site, env, plan).await {
            Ok(p) => p,
            Err(Stop::Cancelled) => {
                return self
                    .record_stopped(site, Vec::new(), cleared.permission)
                    .await;
            }
            Err(Stop::Busy(msg)) => {
                self.record(
                    site,
                    Outcome::refused(msg),
                    Vec::new(),
                    cleared.permission,
                    None,
                )
                .await?;
                return Ok(None);
            }
        };
        // Stop pressed after the answer, while the snapshot was taken: the
        // call does not run (its step is closed with no change).
        if site.ctx.cancel.is_cancelled() {
            let parts = self.close_snapshot(site, pending).await;
            return self.record_stopped(site, parts, cleared.permission).await;
        }
        let mut ran = self.run_call(site).await;
        if !env.plugins.hooked.is_empty() {
            notes.extend(
                self.plugin_after(
                    env.plugins,
                    &call.name,
                    &call.input,
                    &ran.outcome.output,
                    ran.outcome.is_error,
                )
                .await,
            );
        }
        let mut stopped_by_hook = false;
        if env.hooks.has(mia_config::HookEvent::PostToolUse) {
            let (more, stop) = self.post_tool_hooks(site, env, &ran.outcome).await;
            notes.extend(more);
            stopped_by_hook = stop;
        }
        if !notes.is_empty() {
            ran.outcome.output = format!("{}\n\n{}", ran.outcome.output, notes.join("\n"));
        }
        if let Some(note) = cleared.rule_note {
            ran.outcome.output = format!("{}\n\n{note}", ran.outcome.output);
        }
        let pending = pending.map(|p| {
            p.map(|mut p| {
                p.written = ran.written.take();
                p
            })
        });
        let mut parts = self.close_snapshot(site, pending).await;
        if !ran.rich.is_empty() {
            self.emit(Event::ToolContent {
                session_id: site.session_id,
                message_id: site.message_id,
                call_id: call.id.clone(),
                items: ran.rich.clone(),
            });
            parts.push(PartContent::ToolContent {
                call_id: call.id.clone(),
                items: ran.rich,
            });
        }
        self.record(site, ran.outcome, parts, cleared.permission, ran.sandbox)
            .await?;
        if site.ctx.cancel.is_cancelled() {
            return Ok(Some(TurnEnd::Cancelled));
        }
        if stopped_by_hook {
            return Ok(Some(TurnEnd::Blocked));
        }
        Ok(None)
    }

    /// Snapshot what the call may change. A shell command waits for
    /// another one running on the same work tree (their changes could not
    /// be told apart); past the wait, or on Stop, it does not run.
    async fn begin_call_snapshot(
        &self,
        site: &CallSite<'_>,
        env: CallEnv<'_>,
        plan: &mia_tools::ToolPlan,
    ) -> Result<Begun, Stop> {
        let cfg = match (&plan.modifies, env.snapshot_config) {
            (Some(paths), _) if paths.is_empty() => return Ok(None),
            (_, None) => return Ok(None),
            (_, Some(cfg)) => cfg,
        };
        let begin = self.begin_snapshot(
            site.state,
            site.session_id,
            site.message_id,
            &site.call.id,
            plan.modifies.clone(),
            cfg.clone(),
        );
        let began = tokio::select! {
            r = begin => r,
            () = site.ctx.cancel.cancelled() => return Err(Stop::Cancelled),
        };
        match began {
            Err(SnapFail::Busy(msg)) => Err(Stop::Busy(msg)),
            Err(SnapFail::Unavailable(reason)) => Ok(Some(Err(reason))),
            Ok(p) => Ok(Some(Ok(p))),
        }
    }

    /// Close a begun snapshot: its part, and its Event sent.
    async fn close_snapshot(&self, site: &CallSite<'_>, pending: Begun) -> Vec<PartContent> {
        let Some(pending) = pending else {
            return Vec::new();
        };
        let (part, event) = self
            .finish_snapshot(site.state, site.session_id, &site.call.id, pending)
            .await;
        self.emit(event);
        vec![part]
    }

    /// Run the tool, its output live to every subscriber. A command
    /// stopped by a timeout or a cancel did not do its job: shown as failed.
    async fn run_call(&self, site: &CallSite<'_>) -> Ran {
        let call = site.call;
        let started = Instant::now();
        let result = match self.inner.tools.get_with(&call.name, site.ctx) {
            Some(t) => {
                let mut live_ctx = site.ctx.clone();
                live_ctx.call_id = Some(call.id.clone());
                let rt = self.clone();
                let (session_id, message_id) = (site.session_id, site.message_id);
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
        match result {
            Ok(out) => {
                let flag = |k: &str| out.metadata.get(k) == Some(&serde_json::Value::Bool(true));
                let stopped = flag("cancelled") || flag("timed_out") || flag("subagent_failed");
                Ran {
                    rich: out
                        .metadata
                        .get("content")
                        .and_then(|v| serde_json::from_value(v.clone()).ok())
                        .unwrap_or_default(),
                    sandbox: out
                        .metadata
                        .get("sandbox")
                        .and_then(|v| serde_json::from_value(v.clone()).ok()),
                    written: crate::snapshots::traced_writes(&out.metadata),
                    outcome: Outcome {
                        output: out.output,
                        is_error: stopped,
                        duration_ms,
                    },
                }
            }
            Err(e) => Ran {
                outcome: Outcome {
                    output: e.to_string(),
                    is_error: true,
                    duration_ms,
                },
                rich: Vec::new(),
                sandbox: None,
                written: None,
            },
        }
    }
}

/// Why a call stops before it runs, at its snapshot.
enum Stop {
    Cancelled,
    Busy(String),
}

impl Runtime {
    /// `PostToolUse` hooks: what they tell the model (a block's reason,
    /// more context), and whether one stopped the turn (`continue: false`).
    async fn post_tool_hooks(
        &self,
        site: &CallSite<'_>,
        env: CallEnv<'_>,
        outcome: &Outcome,
    ) -> (Vec<String>, bool) {
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
            "tool_response": {"output": outcome.output, "is_error": outcome.is_error, "success": !outcome.is_error},
            "tool_use_id": call.id,
        });
        let v = self
            .run_hooks(
                env.hooks,
                &hook_site,
                mia_config::HookEvent::PostToolUse,
                Some(&call.name),
                input,
            )
            .await;
        site.hook_runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(v.runs);
        let mut notes = Vec::new();
        if let Some(why) = v.block {
            notes.push(format!("[PostToolUse hook: {why}]"));
        }
        notes.extend(
            v.context
                .into_iter()
                .map(|c| format!("[PostToolUse hook context: {c}]")),
        );
        let stop = match v.stop {
            Some(why) => {
                notes.push(format!("[A PostToolUse hook stopped the turn: {why}]"));
                true
            }
            None => false,
        };
        (notes, stop)
    }
}
