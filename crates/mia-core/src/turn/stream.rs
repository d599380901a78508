//! Streaming one step's answer: deltas batched into Events, retries
//! reported, partial output kept when the stream fails or is cancelled.

use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use mia_protocol::{Event, MessageId, SessionId};
use mia_providers::{ChatRequest, StreamEvent};
use tokio_util::sync::CancellationToken;

use crate::runtime::Runtime;
use crate::turn::DeltaBatch;

/// What one streamed step produced.
pub(crate) struct Streamed {
    pub(crate) completion: mia_providers::Completion,
    pub(crate) failure: Option<mia_providers::ProviderError>,
    pub(crate) started: Instant,
}

impl Runtime {
    /// Stream `request` from `provider`, emitting batched deltas.
    pub(crate) async fn stream_step(
        &self,
        provider: &Arc<dyn mia_providers::Provider>,
        request: ChatRequest,
        cancel: &CancellationToken,
        session_id: SessionId,
        message_id: MessageId,
    ) -> Streamed {
        let started = Instant::now();
        let mut completion = mia_providers::Completion::default();
        let mut stream = provider.stream(request, cancel.clone());
        let mut batch = DeltaBatch::new(session_id, message_id);
        let mut failure: Option<mia_providers::ProviderError> = None;
        loop {
            // Flush batched deltas on time even when the stream pauses.
            let item = match batch.deadline() {
                None => stream.next().await,
                Some(deadline) => tokio::select! {
                    item = stream.next() => item,
                    () = tokio::time::sleep_until(deadline.into()) => {
                        batch.flush(|e| self.emit(e));
                        continue;
                    }
                },
            };
            let Some(item) = item else { break };
            match item {
                Ok(event) => {
                    completion.apply(&event);
                    match &event {
                        StreamEvent::TextDelta { text } => {
                            batch.push(false, text, |e| self.emit(e));
                        }
                        StreamEvent::ReasoningDelta { text, .. } => {
                            batch.push(true, text, |e| self.emit(e));
                        }
                        StreamEvent::Retrying {
                            attempt,
                            delay_ms,
                            reason,
                        } => self.emit(Event::Retrying {
                            session_id,
                            attempt: *attempt,
                            delay_ms: *delay_ms,
                            reason: reason.clone(),
                        }),
                        _ => {}
                    }
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        batch.flush(|e| self.emit(e));
        Streamed {
            completion,
            failure,
            started,
        }
    }
}
