//! Between stored messages (`mia-protocol`) and provider requests/results.

use mia_protocol::{Message, PartContent, Role};

use crate::types::{ChatMessage, ChatRole, Completion, ContentPart};

/// The parts to store for a finished (or partial) response: reasoning, text,
/// then finished tool calls. Unfinished tool calls are not included.
pub fn completion_parts(c: &Completion) -> Vec<PartContent> {
    let mut parts = Vec::new();
    if !c.reasoning.is_empty() {
        parts.push(PartContent::Reasoning {
            text: c.reasoning.clone(),
        });
    }
    if !c.text.is_empty() {
        parts.push(PartContent::text(c.text.clone()));
    }
    for call in &c.tool_calls {
        parts.push(PartContent::ToolCall {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            input: call.input.clone(),
        });
    }
    parts
}

fn push(out: &mut Vec<ChatMessage>, role: ChatRole, part: ContentPart) {
    match out.last_mut() {
        Some(last) if last.role == role => last.content.push(part),
        _ => out.push(ChatMessage {
            role,
            content: vec![part],
        }),
    }
}

/// Turn stored messages into the conversation sent to a provider.
///
/// Tool results are sent as user content whichever message stores them (an
/// assistant message holding its own results is split around them);
/// compaction summaries become user text; system messages, errors,
/// snapshots and other bookkeeping parts are not sent. Messages replaced by
/// a compaction summary (`compacted_by`) are skipped.
///
/// Stored reasoning has no provider signature (`PartContent::Reasoning`
/// carries none), so it is not replayed to Anthropic.
pub fn history_to_messages(history: &[Message]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::new();
    for m in history.iter().filter(|m| m.compacted_by.is_none()) {
        let role = match m.role {
            Role::User => ChatRole::User,
            Role::Assistant => ChatRole::Assistant,
            Role::System => continue,
        };
        for part in &m.parts {
            match &part.content {
                PartContent::Text { text, .. } if !text.trim().is_empty() => {
                    push(&mut out, role, ContentPart::text(text.clone()));
                }
                PartContent::Reasoning { text } if role == ChatRole::Assistant => push(
                    &mut out,
                    role,
                    ContentPart::Reasoning {
                        text: text.clone(),
                        signature: None,
                    },
                ),
                PartContent::ToolCall {
                    call_id,
                    tool,
                    input,
                } => push(
                    &mut out,
                    ChatRole::Assistant,
                    ContentPart::ToolCall {
                        id: call_id.clone(),
                        name: tool.clone(),
                        input: input.clone(),
                        signature: None,
                    },
                ),
                PartContent::ToolResult {
                    call_id,
                    tool,
                    output,
                    is_error,
                    ..
                } => push(
                    &mut out,
                    ChatRole::User,
                    ContentPart::ToolResult {
                        call_id: call_id.clone(),
                        name: tool.clone(),
                        content: output.clone(),
                        is_error: *is_error,
                    },
                ),
                PartContent::Image { media_type, data } if !data.starts_with("file://") => push(
                    &mut out,
                    role,
                    ContentPart::Image {
                        media_type: media_type.clone(),
                        data: data.clone(),
                    },
                ),
                PartContent::CompactionSummary { summary, .. } => push(
                    &mut out,
                    ChatRole::User,
                    ContentPart::text(format!("Summary of the earlier conversation:\n\n{summary}")),
                ),
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mia_protocol::{MessageId, MessageMetadata, MessageType, Part, PartId, SessionId};
    use serde_json::json;

    fn msg(role: Role, parts: Vec<PartContent>) -> Message {
        let id = MessageId::new();
        Message {
            id,
            session_id: SessionId::new(),
            role,
            message_type: MessageType::Normal,
            metadata: MessageMetadata::default(),
            created_at: 0,
            compacted_by: None,
            parts: parts
                .into_iter()
                .enumerate()
                .map(|(i, content)| Part {
                    id: PartId::new(),
                    message_id: id,
                    index: i as u32,
                    created_at: 0,
                    content,
                })
                .collect(),
        }
    }

    #[test]
    fn assistant_messages_holding_results_are_split() {
        let history = vec![
            msg(Role::System, vec![PartContent::text("ignored")]),
            msg(Role::User, vec![PartContent::text("fix it")]),
            msg(
                Role::Assistant,
                vec![
                    PartContent::Reasoning { text: "hmm".into() },
                    PartContent::text("Reading."),
                    PartContent::ToolCall {
                        call_id: "c1".into(),
                        tool: "read".into(),
                        input: json!({"path": "a"}),
                    },
                    PartContent::ToolResult {
                        call_id: "c1".into(),
                        tool: "read".into(),
                        output: "content".into(),
                        is_error: false,
                        duration_ms: None,
                    },
                    PartContent::text("Done."),
                    PartContent::Error {
                        kind: "network".into(),
                        message: "x".into(),
                        retryable: true,
                    },
                ],
            ),
            msg(
                Role::User,
                vec![PartContent::text("thanks"), PartContent::text(" ")],
            ),
        ];
        let msgs = history_to_messages(&history);
        let roles: Vec<ChatRole> = msgs.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                ChatRole::User,
                ChatRole::Assistant,
                ChatRole::User,
                ChatRole::Assistant,
                ChatRole::User
            ]
        );
        assert_eq!(msgs[1].content.len(), 3);
        assert!(matches!(msgs[2].content[0], ContentPart::ToolResult { .. }));
        assert_eq!(msgs[4].content.len(), 1, "blank text dropped");
    }

    #[test]
    fn completion_becomes_parts() {
        let c = Completion {
            text: "hi".into(),
            reasoning: "why".into(),
            tool_calls: vec![crate::types::ToolCall {
                id: "t".into(),
                name: "glob".into(),
                input: json!({}),
                signature: None,
            }],
            ..Completion::default()
        };
        let kinds: Vec<String> = completion_parts(&c)
            .iter()
            .map(|p| p.kind().to_string())
            .collect();
        assert_eq!(kinds, ["reasoning", "text", "tool_call"]);
    }
}
