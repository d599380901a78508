//! A turn: record the user message, resolve agent and model, then steps
//! (prompt → stream → record → tool calls) until the model stops.

mod calls;
mod equip;
mod offer;
mod policy;
mod record;
mod setup;
mod step;
mod stream;

pub(crate) use setup::TurnSetup;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mia_protocol::{Event, MessageId, SessionId, TokenUsage, TurnEnd};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::CoreError;
use crate::runtime::Runtime;
use crate::session::SessionState;

/// How text deltas are batched into Events (UIs repaint at ~60 Hz).
pub(crate) const DELTA_BATCH: Duration = Duration::from_millis(25);

impl Runtime {
    pub(crate) async fn turn(
        &self,
        state: Arc<SessionState>,
        text: String,
        agent: Option<String>,
        model: Option<String>,
        cancel: CancellationToken,
    ) {
        let session_id = state.id;
        let steps_before = state.steps_taken.load(std::sync::atomic::Ordering::Relaxed);
        let mut totals = TurnTotals::default();
        let span = tracing::info_span!("turn", session = %session_id);
        let end = match self
            .run_turn(&state, text, agent, model, &cancel, &mut totals)
            .instrument(span)
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
        state.with(|l| l.pending.clear());
        // Settle the session before another turn may start.
        if let Err(e) = self
            .set_status(&state, mia_protocol::SessionStatus::Idle)
            .await
        {
            tracing::warn!(session = %session_id, error = %e, "could not mark the session idle");
        }
        let queued = state.with(|l| l.queued_agent.take());
        if let Some(next) = queued
            && let Err(e) = self.set_agent(&state, &next).await
        {
            tracing::warn!(session = %session_id, error = %e, "queued agent switch failed");
        }
        if state.steps_taken.load(std::sync::atomic::Ordering::Relaxed) > steps_before {
            self.retain(&state).await;
        }
        self.release(&state).await;
        if end != TurnEnd::Cancelled {
            self.share_after_turn(session_id);
        }
        let finished = Event::TurnFinished {
            session_id,
            end,
            steps: totals.steps,
            usage: totals.usage,
            cost_usd: totals.cost,
        };
        self.plugin_event(&state.directory, &finished);
        self.emit(finished);
    }

    /// The turn's loop: set up, then steps until one ends the turn.
    pub(crate) async fn run_turn(
        &self,
        state: &Arc<SessionState>,
        text: String,
        agent_override: Option<String>,
        model_override: Option<String>,
        cancel: &CancellationToken,
        totals: &mut TurnTotals,
    ) -> Result<TurnEnd, CoreError> {
        let session_id = state.id;
        let mut t = self
            .setup_turn(state, text, agent_override, model_override, cancel)
            .await?;
        let mut step = 0u32;
        loop {
            if step >= t.agent.steps {
                self.emit(Event::Error {
                    session_id: Some(session_id),
                    kind: "step_limit".into(),
                    message: format!(
                        "the {} agent reached its limit of {} steps in one turn; send another message to continue",
                        t.agent_name, t.agent.steps
                    ),
                    retryable: false,
                });
                return Ok(TurnEnd::StepLimit);
            }
            step += 1;
            totals.steps = step;
            let span = tracing::info_span!("step", session = %session_id, n = step);
            if let Some(end) = self
                .run_step(state, &mut t, cancel, totals)
                .instrument(span)
                .await?
            {
                if end == TurnEnd::Completed && self.stop_hooks(state, &mut t).await? {
                    continue;
                }
                if end == TurnEnd::Completed {
                    self.compact_at_turn_end(state, &mut t, cancel).await;
                }
                return Ok(end);
            }
        }
    }
}

/// Times `Stop` hooks may make one turn go on.
const MAX_STOP_CONTINUES: u32 = 5;

impl Runtime {
    /// `Stop` (`SubagentStop` for a subagent) hooks when the agent would
    /// end its turn: `true` when one blocked it, whose reason then goes to
    /// the model as a message and the turn goes on.
    async fn stop_hooks(
        &self,
        state: &Arc<SessionState>,
        t: &mut TurnSetup,
    ) -> Result<bool, CoreError> {
        let event = if state.lineage().depth > 0 {
            mia_config::HookEvent::SubagentStop
        } else {
            mia_config::HookEvent::Stop
        };
        if !t.hooks.has(event) || t.stop_continues >= MAX_STOP_CONTINUES {
            return Ok(false);
        }
        let site = crate::hooks::HookSite {
            config: &t.config,
            dir: &state.directory,
            session_id: state.id,
            call_id: None,
        };
        let v = self
            .run_hooks(
                &t.hooks,
                &site,
                event,
                None,
                serde_json::json!({ "stop_hook_active": t.stop_continues > 0 }),
            )
            .await;
        let Some(reason) = v.block.filter(|_| v.stop.is_none()) else {
            return Ok(false);
        };
        t.stop_continues += 1;
        self.add_message(
            state.id,
            mia_protocol::NewMessage {
                role: Some(mia_protocol::Role::User),
                metadata: mia_protocol::MessageMetadata {
                    agent: Some(t.agent_name.clone()),
                    ..Default::default()
                },
                parts: vec![mia_protocol::PartContent::Text {
                    text: format!("[{} hook: {reason}]", event.as_str()),
                    synthetic: true,
                }],
                ..Default::default()
            },
        )
        .await?;
        Ok(true)
    }
}

/// A session title from a first message: its first line, at most 60
/// characters (the one rule, which sharing also cuts titles by).
pub use mia_share::title_from;

/// Text and reasoning deltas coalesced into one Event per kind every
/// [`DELTA_BATCH`] (UIs repaint at ~60 Hz; one Event per token is waste).
pub(crate) struct DeltaBatch {
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
pub(crate) struct TurnTotals {
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

/// The UTC date a session started (`2026-12-01`): what the system prompt
/// says, fixed for the session so the prompt stays byte-identical across
/// its steps and turns (providers cache the request prefix).
pub(crate) fn session_date(created_at_ms: i64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(created_at_ms.div_euclid(1000))
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    t.format(time::macros::format_description!("[year]-[month]-[day]"))
        .unwrap_or_default()
}
