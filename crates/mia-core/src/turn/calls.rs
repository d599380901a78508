//! Stage "run the calls" of a step: each call in order (several `task`
//! calls at once), with the doom-loop guard and the call's own network
//! gate; the first call that ends the turn stops the rest.

use std::sync::Arc;

use mia_permission::Checker;
use mia_protocol::{Event, MessageId, TurnEnd};
use mia_providers::ToolCall;
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::dispatch::network::StepNetGate;
use crate::dispatch::{CallEnv, CallSite, DOOM_LOOP, Outcome};
use crate::runtime::Runtime;
use crate::session::SessionState;
use crate::turn::setup::TurnSetup;

/// What the calls of one step run with.
pub(crate) struct StepCalls<'c> {
    pub(crate) checker: &'c Checker<'c>,
    pub(crate) net_gate: Option<Arc<StepNetGate>>,
    pub(crate) message_id: MessageId,
}

impl Runtime {
    /// Run the step's calls; `Some(end)` ends the turn.
    pub(crate) async fn run_calls(
        &self,
        state: &Arc<SessionState>,
        t: &mut TurnSetup,
        step: StepCalls<'_>,
        calls: Vec<ToolCall>,
        cancel: &CancellationToken,
    ) -> Result<Option<TurnEnd>, CoreError> {
        // Calls of tools that run at once (`task`: each waits for one of
        // the session's subagent slots) run concurrently when the step has
        // nothing else; everything else in order.
        let tools = &self.inner.tools;
        if calls.len() > 1 && calls.iter().all(|c| tools.concurrent(&c.name, &t.tool_ctx)) {
            return self.run_concurrently(state, t, &step, &calls).await;
        }
        for call in calls {
            if cancel.is_cancelled() {
                return Ok(Some(TurnEnd::Cancelled));
            }
            let doom_loop = match self.doom_loop(state, t, step.message_id, &call).await? {
                Ok(repeated) => repeated,
                Err(end) => return Ok(Some(end)),
            };
            // The call's own gate, so its network asks show on its card.
            let call_ctx = step.net_gate.as_ref().map(|g| {
                let mut c = t.tool_ctx.clone();
                c.network = Some(g.for_call(&call));
                c
            });
            let site = CallSite {
                state,
                session_id: state.id,
                message_id: step.message_id,
                agent: &t.agent_name,
                call: &call,
                ctx: call_ctx.as_ref().unwrap_or(&t.tool_ctx),
                hook_runs: Default::default(),
            };
            let end = self.run_tool(&site, env(t, &step), doom_loop).await?;
            if let Some(end) = end {
                return Ok(Some(end));
            }
        }
        Ok(None)
    }

    async fn run_concurrently(
        &self,
        state: &Arc<SessionState>,
        t: &TurnSetup,
        step: &StepCalls<'_>,
        calls: &[ToolCall],
    ) -> Result<Option<TurnEnd>, CoreError> {
        let session_id = state.id;
        let sites: Vec<CallSite<'_>> = calls
            .iter()
            .map(|call| CallSite {
                state,
                session_id,
                message_id: step.message_id,
                agent: &t.agent_name,
                call,
                ctx: &t.tool_ctx,
                hook_runs: Default::default(),
            })
            .collect();
        let runs = sites
            .iter()
            .map(|site| self.run_tool(site, env(t, step), false));
        for end in futures_util::future::join_all(runs).await {
            if let Some(end) = end? {
                return Ok(Some(end));
            }
        }
        Ok(None)
    }

    /// The doom-loop guard: the same call with identical arguments
    /// [`DOOM_LOOP`] times in a row. With a person to ask, `Ok(true)` (the
    /// call asks first); headless, the turn ends.
    async fn doom_loop(
        &self,
        state: &Arc<SessionState>,
        t: &mut TurnSetup,
        message_id: MessageId,
        call: &ToolCall,
    ) -> Result<Result<bool, TurnEnd>, CoreError> {
        let key = (call.name.clone(), call.input.to_string());
        t.recent_calls.push(key.clone());
        let repeats = t
            .recent_calls
            .iter()
            .rev()
            .take_while(|k| **k == key)
            .count();
        if repeats < DOOM_LOOP {
            return Ok(Ok(false));
        }
        if self.inner.opts.interactive {
            return Ok(Ok(true));
        }
        let session_id = state.id;
        let site = CallSite {
            state,
            session_id,
            message_id,
            agent: &t.agent_name,
            call,
            ctx: &t.tool_ctx,
            hook_runs: Default::default(),
        };
        let msg = format!(
            "Stopped: {} was called {repeats} times in a row with identical arguments",
            call.name
        );
        self.record(&site, Outcome::refused(msg.clone()), Vec::new(), None, None)
            .await?;
        self.emit(Event::Error {
            session_id: Some(session_id),
            kind: "doom_loop".into(),
            message: msg,
            retryable: false,
        });
        Ok(Err(TurnEnd::Blocked))
    }
}

/// What a step lends each of its calls.
fn env<'a>(t: &'a TurnSetup, step: &'a StepCalls<'_>) -> CallEnv<'a> {
    CallEnv {
        checker: step.checker,
        snapshot_config: t.snapshot_config.as_ref(),
        plugins: &t.plugins,
        hooks: &t.hooks,
        config: &t.config,
    }
}
