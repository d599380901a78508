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
            signature: c.reasoning_signature.clone(),
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
            signature: call.signature.clone(),
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
/// assistant message holding its own results is split around them); a tool
/// call whose result was never stored (the turn was cancelled or crashed)
/// gets an error result so the conversation stays valid; compaction
/// summaries become user text; a revert record becomes a short user note so
/// the model knows files changed back; other system messages, errors,
/// snapshots and bookkeeping parts are not sent. Messages replaced by a
/// compaction summary (`compacted_by`) are skipped. Reasoning and tool calls
/// carry their provider signatures back.
pub fn history_to_messages(history: &[Message]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::new();
    // A compaction summary stands for everything before the messages it
    // kept, wherever it was stored: it goes first. The model is told, once,
    // that the earlier conversation was summarised.
    let is_summary = |m: &Message| m.message_type == mia_protocol::MessageType::CompactionSummary;
    for m in history
        .iter()
        .filter(|m| m.compacted_by.is_none() && is_summary(m))
    {
        for part in &m.parts {
            if let PartContent::CompactionSummary {
                summary,
                compacted_messages,
            } = &part.content
            {
                push(
                    &mut out,
                    ChatRole::User,
                    ContentPart::text(format!(
                        "[The {compacted_messages} earlier messages of this conversation were summarised to fit the context window; the full record is kept. Continue from this summary and the messages after it.]\n\nSummary of the earlier conversation:\n\n{summary}"
                    )),
                );
            }
        }
    }
    for m in history
        .iter()
        .filter(|m| m.compacted_by.is_none() && !is_summary(m))
    {
        let role = match m.role {
            Role::User => ChatRole::User,
            Role::Assistant => ChatRole::Assistant,
            Role::System => {
                for part in &m.parts {
                    if let PartContent::Revert {
                        restored, removed, ..
                    } = &part.content
                    {
                        push(
                            &mut out,
                            ChatRole::User,
                            ContentPart::text(format!(
                                "[The user reverted file changes: {} restored, {} removed. Re-read files before editing them.]",
                                restored.len(),
                                removed.len()
                            )),
                        );
                    }
                }
                continue;
            }
        };
        let mut unanswered: Vec<(String, String)> = Vec::new();
        for part in &m.parts {
            match &part.content {
                PartContent::Text { text, .. } if !text.trim().is_empty() => {
                    push(&mut out, role, ContentPart::text(text.clone()));
                }
                PartContent::Reasoning { text, signature } if role == ChatRole::Assistant => push(
                    &mut out,
                    role,
                    ContentPart::Reasoning {
                        text: text.clone(),
                        signature: signature.clone(),
                    },
                ),
                PartContent::ToolCall {
                    call_id,
                    tool,
                    input,
                    signature,
                } => {
                    unanswered.push((call_id.clone(), tool.clone()));
                    push(
                        &mut out,
                        ChatRole::Assistant,
                        ContentPart::ToolCall {
                            id: call_id.clone(),
                            name: tool.clone(),
                            input: input.clone(),
                            signature: signature.clone(),
                        },
                    )
                }
                PartContent::ToolResult {
                    call_id,
                    tool,
                    output,
                    is_error,
                    ..
                } => {
                    unanswered.retain(|(id, _)| id != call_id);
                    push(
                        &mut out,
                        ChatRole::User,
                        ContentPart::ToolResult {
                            call_id: call_id.clone(),
                            name: tool.clone(),
                            content: output.clone(),
                            is_error: *is_error,
                        },
                    )
                }
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
        for (call_id, tool) in unanswered {
            push(
                &mut out,
                ChatRole::User,
                ContentPart::ToolResult {
                    call_id,
                    name: tool,
                    content:
                        "The tool call was interrupted before it finished; it may not have run."
                            .into(),
                    is_error: true,
                },
            );
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
                    PartContent::Reasoning {
                        text: "hmm".into(),
                        signature: Some("sig".into()),
                    },
                    PartContent::text("Reading."),
                    PartContent::ToolCall {
                        call_id: "c1".into(),
                        tool: "read".into(),
                        input: json!({"path": "a"}),
                        signature: None,
                    },
                    PartContent::ToolResult {
                        call_id: "c1".into(),
                        tool: "read".into(),
                        output: "content".into(),
                        is_error: false,
                        duration_ms: None,
                        permission: None,
                        sandbox: None,
                        hooks: Vec::new(),
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
    fn unanswered_calls_get_an_error_result_and_reverts_a_note() {
        let history = vec![
            msg(Role::User, vec![PartContent::text("go")]),
            msg(
                Role::Assistant,
                vec![PartContent::ToolCall {
                    call_id: "c9".into(),
                    tool: "bash".into(),
                    input: json!({"command": "sleep 9"}),
                    signature: Some("gsig".into()),
                }],
            ),
            msg(
                Role::System,
                vec![PartContent::Revert {
                    target_message_id: None,
                    restored: vec!["a".into()],
                    removed: vec![],
                    conflicts: vec![],
                    pre_revert_snapshot: None,
                }],
            ),
            msg(Role::User, vec![PartContent::text("again")]),
        ];
        let msgs = history_to_messages(&history);
        assert!(
            matches!(&msgs[1].content[0], ContentPart::ToolCall { signature: Some(s), .. } if s == "gsig")
        );
        assert_eq!(msgs[2].role, ChatRole::User);
        assert!(
            matches!(&msgs[2].content[0], ContentPart::ToolResult { call_id, is_error: true, .. } if call_id == "c9")
        );
        assert!(
            matches!(&msgs[2].content[1], ContentPart::Text { text } if text.contains("reverted"))
        );
        assert!(matches!(&msgs[2].content[2], ContentPart::Text { text } if text == "again"));
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
