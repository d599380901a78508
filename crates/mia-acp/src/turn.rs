//! One `session/prompt`: the user message goes to the runtime, and until
//! the turn finishes its Events become `session/update` notifications
//! (text and thought chunks, tool calls with their status, diffs of
//! written files, the todo list as a plan) and its permission asks
//! `session/request_permission` requests.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, RequestPermissionOutcome, RequestPermissionRequest,
    SessionNotification, SessionUpdate, StopReason, TextContent, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::v1::{self, ConnectionTo};
use agent_client_protocol::{Client, Error};
use mia_core::Runtime;
use mia_protocol::{Event, Op, PermissionReplyKind, PermissionRequest, SessionId};
use tokio::sync::broadcast::error::RecvError;

use crate::translate;

/// What a prompt's task needs.
pub(crate) struct Prompt {
    pub(crate) runtime: Runtime,
    pub(crate) cx: ConnectionTo<Client>,
    pub(crate) session: SessionId,
    pub(crate) acp_session: v1::schema::SessionId,
    pub(crate) cwd: PathBuf,
}

/// The content of a file tool's target before the call, for its diff.
struct Before {
    path: PathBuf,
    text: Option<String>,
}

impl Prompt {
    fn notify(&self, update: SessionUpdate) -> Result<(), Error> {
        self.cx
            .send_notification(SessionNotification::new(self.acp_session.clone(), update))
    }

    fn chunk(text: &str) -> ContentChunk {
        ContentChunk::new(ContentBlock::Text(TextContent::new(text.to_string())))
    }

    /// Send the message and follow the turn to its end.
    pub(crate) async fn run(
        self,
        events: tokio::sync::broadcast::Receiver<Event>,
        text: String,
    ) -> Result<StopReason, Error> {
        let mut events = events;
        self.runtime
            .submit(Op::UserMessage {
                session_id: self.session,
                text,
                agent: None,
                model: None,
            })
            .await
            .map_err(crate::core_error)?;
        let mut before: HashMap<String, Before> = HashMap::new();
        let mut running: HashSet<String> = HashSet::new();
        let mut last_error: Option<String> = None;
        loop {
            let ev = match events.recv().await {
                Ok(ev) => ev,
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(dropped = n, "acp: events were dropped");
                    continue;
                }
                Err(RecvError::Closed) => {
                    return Err(
                        Error::internal_error().data(serde_json::json!("the runtime stopped"))
                    );
                }
            };
            if let Event::PermissionAsked { request } = &ev {
                if request.session_id == self.session
                    || request.root_session_id == Some(self.session)
                {
                    self.ask(request).await?;
                }
                continue;
            }
            if ev.session_id() != Some(self.session) {
                continue;
            }
            match ev {
                Event::TextDelta { text, .. } => {
                    self.notify(SessionUpdate::AgentMessageChunk(Self::chunk(&text)))?;
                }
                Event::ReasoningDelta { text, .. } => {
                    self.notify(SessionUpdate::AgentThoughtChunk(Self::chunk(&text)))?;
                }
                Event::ToolCall {
                    call_id,
                    tool,
                    input,
                    ..
                } => {
                    if matches!(tool.as_str(), "write" | "edit")
                        && let Some(path) = translate::tool_path(&tool, &input, &self.cwd)
                    {
                        let text = std::fs::read_to_string(&path).ok();
                        before.insert(call_id.clone(), Before { path, text });
                    }
                    self.notify(SessionUpdate::ToolCall(translate::tool_call(
                        &call_id, &tool, &input, &self.cwd,
                    )))?;
                }
                Event::ToolOutput { call_id, .. } if running.insert(call_id.clone()) => {
                    self.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        call_id,
                        ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                    )))?;
                }
                Event::ToolResult {
                    call_id,
                    tool,
                    output,
                    is_error,
                    ..
                } => {
                    let diff = before.remove(&call_id).filter(|_| !is_error).and_then(|b| {
                        let new = std::fs::read_to_string(&b.path).ok()?;
                        Some(ToolCallContent::Diff(
                            Diff::new(b.path, new).old_text(b.text),
                        ))
                    });
                    self.notify(SessionUpdate::ToolCallUpdate(translate::tool_result(
                        &call_id, &output, is_error, diff,
                    )))?;
                    if tool == "todo" {
                        let todos = self
                            .runtime
                            .session_todos(self.session)
                            .await
                            .unwrap_or_default();
                        self.notify(SessionUpdate::Plan(Plan::new(translate::plan_entries(
                            &todos,
                        ))))?;
                    }
                }
                Event::Error { message, .. } => last_error = Some(message),
                Event::TurnFinished { end, .. } => {
                    return translate::stop_reason(end).ok_or_else(|| {
                        Error::internal_error().data(serde_json::json!(
                            last_error.unwrap_or_else(|| "the turn failed".into())
                        ))
                    });
                }
                _ => {}
            }
        }
    }

    /// Put an ask to the editor and answer the runtime with its choice.
    async fn ask(&self, request: &PermissionRequest) -> Result<(), Error> {
        let call = request
            .call_id
            .clone()
            .unwrap_or_else(|| request.id.clone());
        let mut fields = ToolCallUpdateFields::new()
            .title(format!("{}: {}", request.tool, request.target))
            .kind(translate::tool_kind(&request.tool))
            .status(ToolCallStatus::Pending)
            .raw_input(request.input.clone());
        if !request.reason.is_empty() {
            fields = fields.content(vec![ToolCallContent::from(request.reason.clone())]);
        }
        let answer = self
            .cx
            .send_request(RequestPermissionRequest::new(
                self.acp_session.clone(),
                ToolCallUpdate::new(call, fields),
                translate::permission_options(&request.options),
            ))
            .block_task()
            .await;
        let reply = match answer {
            Ok(r) => match r.outcome {
                RequestPermissionOutcome::Selected(s) => {
                    translate::reply_for(&s.option_id.0).unwrap_or(PermissionReplyKind::Deny)
                }
                // Cancelled (the prompt is being cancelled) or unknown.
                _ => PermissionReplyKind::Deny,
            },
            Err(e) => {
                tracing::warn!(error = %e.message, "acp: the permission request failed; denied");
                PermissionReplyKind::Deny
            }
        };
        if let Err(e) = self
            .runtime
            .submit(Op::PermissionReply {
                session_id: request.session_id,
                request_id: request.id.clone(),
                reply,
            })
            .await
        {
            tracing::warn!(error = %e, "acp: the answer did not reach the ask (it was settled already)");
        }
        Ok(())
    }
}
