//! Stage "record" of a step: what the stream brought is stored as one
//! assistant message (partial output too), with its figures; the calls
//! that will run are announced.

use std::sync::Arc;

use mia_protocol::{Event, MessageId, MessageMetadata, NewMessage, PartContent, Role, TurnEnd};
use mia_providers::{ProviderError, ToolCall};
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::runtime::Runtime;
use crate::session::SessionState;
use crate::turn::TurnTotals;
use crate::turn::setup::TurnSetup;
use crate::turn::stream::Streamed;

/// What a recorded answer leaves the step with.
pub(crate) enum Answered {
    /// The turn ends here (completed, cancelled or failed).
    End(TurnEnd),
    /// These calls run next.
    Calls(Vec<ToolCall>),
}

impl Runtime {
    /// The provider said the request does not fit: compact, then send again
    /// once (never in a loop), unless compaction is off. `true` when the
    /// step should be taken again.
    pub(crate) async fn retry_after_overflow(
        &self,
        state: &Arc<SessionState>,
        t: &mut TurnSetup,
        streamed: &Streamed,
        cancel: &CancellationToken,
    ) -> bool {
        let overflowed = matches!(
            &streamed.failure,
            Some(ProviderError::ContextTooLong { .. })
        ) && streamed.completion.text.is_empty()
            && streamed.completion.tool_calls.is_empty();
        if !overflowed
            || cancel.is_cancelled()
            || t.overflow_retried
            || !crate::compaction::Settings::from_config(&t.config).automatic()
        {
            return false;
        }
        t.overflow_retried = true;
        self.compact_claimed(
            state,
            &t.config,
            crate::compaction::Trigger::Overflow,
            Some(&t.model),
            cancel,
        )
        .await
        .is_ok()
    }

    /// Store what arrived, even when the stream failed or was cancelled,
    /// and say how the step goes on.
    pub(crate) async fn record_answer(
        &self,
        state: &SessionState,
        t: &TurnSetup,
        totals: &mut TurnTotals,
        message_id: MessageId,
        streamed: Streamed,
        cancel: &CancellationToken,
    ) -> Result<Answered, CoreError> {
        let session_id = state.id;
        let Streamed {
            completion,
            failure,
            started,
        } = streamed;
        let failure = failure.map(|e| with_overflow_advice(e, t, session_id));
        let calls = if failure.is_none() {
            completion.tool_calls.clone()
        } else {
            Vec::new()
        };
        let cancelled = cancel.is_cancelled() || matches!(failure, Some(ProviderError::Cancelled));
        let parts = answer_parts(&completion, failure.as_ref(), cancelled);
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
            finish: Some(finish(&completion, failure.as_ref(), cancelled)),
        };
        let stored = self
            .inner
            .store
            .call(move |db| {
                db.add_message(
                    &session_id,
                    NewMessage {
                        id: Some(message_id),
                        role: Some(Role::Assistant),
                        metadata,
                        parts,
                        ..Default::default()
                    },
                )
            })
            .await?;
        // The stored form replaces the streamed draft in UIs.
        self.emit(Event::MessageStored { message: stored });
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
            return Ok(Answered::End(TurnEnd::Cancelled));
        }
        if let Some(e) = failure {
            self.emit(Event::Error {
                session_id: Some(session_id),
                kind: e.kind().to_string(),
                message: e.to_string(),
                retryable: e.is_retryable(),
            });
            return Ok(Answered::End(TurnEnd::Error));
        }
        if calls.is_empty() {
            return Ok(Answered::End(TurnEnd::Completed));
        }
        Ok(Answered::Calls(calls))
    }
}

/// An overflow that compaction did not fix says what to do about it.
fn with_overflow_advice(
    e: ProviderError,
    t: &TurnSetup,
    session_id: mia_protocol::SessionId,
) -> ProviderError {
    match e {
        ProviderError::ContextTooLong { provider, message } => {
            let advice = crate::compaction::overflow_advice(
                &crate::compaction::Settings::from_config(&t.config),
                session_id,
            );
            ProviderError::ContextTooLong {
                provider,
                message: format!("{message}. {advice}"),
            }
        }
        other => other,
    }
}

/// Reasoning, text (🧠/🌸 lines split into commentary parts) and the
/// calls that will run; a call cut off by a failure is dropped.
fn answer_parts(
    completion: &mia_providers::Completion,
    failure: Option<&ProviderError>,
    cancelled: bool,
) -> Vec<PartContent> {
    let mut parts = Vec::new();
    for part in mia_providers::convert::completion_parts(completion) {
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
    if let Some(e) = failure
        && !cancelled
    {
        parts.push(PartContent::Error {
            kind: e.kind().to_string(),
            message: e.to_string(),
            retryable: e.is_retryable(),
        });
    }
    parts
}

/// How the answer ended, as recorded with the message.
fn finish(
    completion: &mia_providers::Completion,
    failure: Option<&ProviderError>,
    cancelled: bool,
) -> String {
    if cancelled {
        "cancelled".to_string()
    } else if failure.is_some() {
        "error".to_string()
    } else {
        completion
            .stop
            .as_ref()
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|| "end_turn".into())
    }
}
