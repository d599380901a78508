//! One step of a turn, as a pipeline of named stages (each in its own
//! file):
//!
//! 1. judge rules: the compiled policy ([`policy`](super::policy))
//! 2. equip: sandbox, network gate, MCP and plugin tools ([`equip`](super::equip))
//! 3. build request: tools offered, system prompt, history ([`offer`](super::offer))
//! 4. stream the answer ([`stream`](super::stream))
//! 5. record it ([`record`](super::record))
//! 6. run its calls ([`calls`](super::calls)), each through dispatch's
//!    stages: resolve → judge → snapshot → run → record.
//!
//! A child turn (a subagent's) and a resumed turn take the same stages.

use std::sync::Arc;

use mia_protocol::{Event, MessageId, TurnEnd};
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::runtime::Runtime;
use crate::session::SessionState;
use crate::turn::TurnTotals;
use crate::turn::calls::StepCalls;
use crate::turn::policy::step_checker;
use crate::turn::record::Answered;
use crate::turn::setup::TurnSetup;

impl Runtime {
    /// Run one step; `Some(end)` ends the turn.
    pub(crate) async fn run_step(
        &self,
        state: &Arc<SessionState>,
        t: &mut TurnSetup,
        cancel: &CancellationToken,
        totals: &mut TurnTotals,
    ) -> Result<Option<TurnEnd>, CoreError> {
        let session_id = state.id;
        let policy = self.step_policy(state, t);
        self.ensure_lineage(state, &t.config, &t.approvals, t.trusted)
            .await?;
        let lineage = state.lineage().clone();
        let net_gate = self.equip_step(state, t, &policy, &lineage, cancel).await;
        let offer = self.offer(t, &lineage);
        let request = self.build_request(state, t, offer, cancel).await?;

        // The id exists from the first delta; the message is stored when
        // its stream ends (one commit), partial output included.
        let message_id = MessageId::new();
        self.emit(Event::StepStarted {
            session_id,
            message_id,
            agent: t.agent_name.clone(),
            model: t.model.to_string(),
        });
        // A command's `` !`cmd` `` lines are the first step's calls; the
        // model is asked once their results are in.
        let streamed = if t.prelude.is_empty() {
            self.stream_step(&t.provider, request, cancel, session_id, message_id)
                .await
        } else {
            prelude_step(std::mem::take(&mut t.prelude))
        };
        if self.retry_after_overflow(state, t, &streamed, cancel).await {
            return Ok(None);
        }
        let calls = match self
            .record_answer(state, t, totals, message_id, streamed, cancel)
            .await?
        {
            Answered::End(end) => return Ok(Some(end)),
            Answered::Calls(calls) => calls,
        };
        // Only the full wall stands in for plain words; under the fallback
        // the engine asks as if there were none.
        let path_ctx = t.path_ctx.clone();
        let checker = crate::sandbox::Wall::of(&t.tool_ctx.sandbox)
            .apply(step_checker(&policy, &path_ctx, t.answerer, &lineage));
        let step = StepCalls {
            checker: &checker,
            net_gate,
            message_id,
        };
        self.run_calls(state, t, step, calls, cancel).await
    }
}

/// The step a command's shell lines make: bash calls, no model request.
fn prelude_step(lines: Vec<String>) -> crate::turn::stream::Streamed {
    let tool_calls = lines
        .into_iter()
        .enumerate()
        .map(|(i, command)| mia_providers::ToolCall {
            id: format!("call_cmd_{}_{i}", mia_protocol::PartId::new().to_string().replace('-', "")),
            name: "bash".into(),
            input: serde_json::json!({ "command": command, "description": "a line of the command's prompt" }),
            signature: None,
        })
        .collect();
    crate::turn::stream::Streamed {
        completion: mia_providers::Completion {
            tool_calls,
            stop: Some(mia_providers::StopReason::ToolUse),
            ..Default::default()
        },
        failure: None,
        started: std::time::Instant::now(),
    }
}
