//! Stored messages → the provider's conversation.

use mia_protocol::{Message, PartContent, Role};
use mia_providers::{ChatMessage, ChatRole, ContentPart};

/// Convert a session's messages (oldest first) into provider messages.
/// Tool results stored on an assistant message become a following user
/// message, as every provider requires. Tool calls without a stored result
/// (a cancelled turn) get a synthetic error result so the conversation stays
/// valid.
pub fn to_chat(messages: &[Message]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::new();
    for m in messages {
        match m.role {
            Role::User | Role::System => {
                let text: Vec<String> = m
                    .parts
                    .iter()
                    .filter_map(|p| match &p.content {
                        PartContent::Text { text, .. } => Some(text.clone()),
                        PartContent::CompactionSummary { summary, .. } => Some(summary.clone()),
                        PartContent::Revert {
                            restored, removed, ..
                        } => Some(format!(
                            "[The user reverted changes: {} files restored, {} removed.]",
                            restored.len(),
                            removed.len()
                        )),
                        _ => None,
                    })
                    .collect();
                if text.is_empty() {
                    continue;
                }
                push(
                    &mut out,
                    ChatRole::User,
                    vec![ContentPart::text(text.join("\n\n"))],
                );
            }
            Role::Assistant => {
                let mut content = Vec::new();
                let mut results = Vec::new();
                let mut calls = Vec::new();
                for p in &m.parts {
                    match &p.content {
                        PartContent::Text { text, .. } if !text.is_empty() => {
                            content.push(ContentPart::text(text.clone()))
                        }
                        PartContent::ToolCall {
                            call_id,
                            tool,
                            input,
                        } => {
                            calls.push((call_id.clone(), tool.clone()));
                            content.push(ContentPart::ToolCall {
                                id: call_id.clone(),
                                name: tool.clone(),
                                input: input.clone(),
                                signature: None,
                            });
                        }
                        PartContent::ToolResult {
                            call_id,
                            tool,
                            output,
                            is_error,
                            ..
                        } => {
                            results.push(ContentPart::ToolResult {
                                call_id: call_id.clone(),
                                name: tool.clone(),
                                content: output.clone(),
                                is_error: *is_error,
                            });
                        }
                        _ => {}
                    }
                }
                for (call, tool) in &calls {
                    let answered = results.iter().any(
                        |r| matches!(r, ContentPart::ToolResult { call_id, .. } if call_id == call),
                    );
                    if !answered {
                        results.push(ContentPart::ToolResult {
                            call_id: call.clone(),
                            name: tool.clone(),
                            content: "The tool call was interrupted before it ran.".into(),
                            is_error: true,
                        });
                    }
                }
                if content.is_empty() {
                    continue;
                }
                push(&mut out, ChatRole::Assistant, content);
                if !results.is_empty() {
                    push(&mut out, ChatRole::User, results);
                }
            }
        }
    }
    out
}

/// Append, merging with the previous message of the same role (providers
/// require alternating roles).
fn push(out: &mut Vec<ChatMessage>, role: ChatRole, content: Vec<ContentPart>) {
    if let Some(last) = out.last_mut()
        && last.role == role
    {
        last.content.extend(content);
        return;
    }
    out.push(ChatMessage { role, content });
}
