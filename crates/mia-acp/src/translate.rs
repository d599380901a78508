//! Pure mappings between mia-code's types and ACP's (v1): tool kinds and
//! titles, stop reasons, permission options and answers, a prompt's
//! content blocks, a stored session replayed as updates.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, EmbeddedResourceResource, PermissionOption, PermissionOptionKind,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate, StopReason, TextContent,
    ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use mia_protocol::{Message, PartContent, PermissionReplyKind, ReplyOption, Role, TurnEnd};
use serde_json::Value;

/// The ACP kind of a mia-code tool (the editor picks an icon by it).
pub fn tool_kind(tool: &str) -> ToolKind {
    match tool {
        "read" => ToolKind::Read,
        "write" | "edit" => ToolKind::Edit,
        "bash" => ToolKind::Execute,
        "glob" | "grep" => ToolKind::Search,
        "fetch" => ToolKind::Fetch,
        "task" | "todo" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// A short title: the command, the path, the pattern or the URL.
pub fn tool_title(tool: &str, input: &Value) -> String {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let detail = match tool {
        "bash" => s("command"),
        "read" | "write" | "edit" => s("path"),
        "glob" | "grep" => s("pattern"),
        "fetch" => s("url"),
        "task" => s("description").or_else(|| s("agent")),
        _ => None,
    };
    match detail {
        Some(d) => {
            let d: String = d.chars().take(120).collect();
            format!("{tool}: {d}")
        }
        None => tool.to_string(),
    }
}

/// The file a file tool works on, as a location the editor can follow.
pub fn tool_path(tool: &str, input: &Value, cwd: &std::path::Path) -> Option<std::path::PathBuf> {
    if !matches!(tool, "read" | "write" | "edit") {
        return None;
    }
    let p = input.get("path").and_then(Value::as_str)?;
    let p = std::path::Path::new(p);
    Some(if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    })
}

/// The `tool_call` update announcing a call.
pub fn tool_call(call_id: &str, tool: &str, input: &Value, cwd: &std::path::Path) -> ToolCall {
    let mut call = ToolCall::new(call_id.to_string(), tool_title(tool, input))
        .kind(tool_kind(tool))
        .status(ToolCallStatus::Pending)
        .raw_input(input.clone());
    if let Some(p) = tool_path(tool, input, cwd) {
        call = call.locations(vec![ToolCallLocation::new(p)]);
    }
    call
}

/// The `tool_call_update` with a call's result.
pub fn tool_result(
    call_id: &str,
    output: &str,
    is_error: bool,
    diff: Option<ToolCallContent>,
) -> ToolCallUpdate {
    let mut content = Vec::new();
    if let Some(d) = diff {
        content.push(d);
    }
    content.push(ToolCallContent::from(output.to_string()));
    ToolCallUpdate::new(
        call_id.to_string(),
        ToolCallUpdateFields::new()
            .status(if is_error {
                ToolCallStatus::Failed
            } else {
                ToolCallStatus::Completed
            })
            .content(content),
    )
}

/// How a turn's end answers `session/prompt` (`None`: an error response).
pub fn stop_reason(end: TurnEnd) -> Option<StopReason> {
    match end {
        TurnEnd::Completed | TurnEnd::Blocked => Some(StopReason::EndTurn),
        TurnEnd::Cancelled => Some(StopReason::Cancelled),
        TurnEnd::StepLimit => Some(StopReason::MaxTurnRequests),
        TurnEnd::Error => None,
        #[allow(unreachable_patterns)]
        _ => Some(StopReason::EndTurn),
    }
}

/// The ACP options of an ask (mia-code's "always for this project" stays
/// an act of the app or the CLI; feedback has no ACP form).
pub fn permission_options(offered: &[ReplyOption]) -> Vec<PermissionOption> {
    offered
        .iter()
        .filter_map(|o| {
            let (name, kind) = match o {
                ReplyOption::Once => ("Allow once", PermissionOptionKind::AllowOnce),
                ReplyOption::Session => {
                    ("Allow for this session", PermissionOptionKind::AllowAlways)
                }
                ReplyOption::Deny => ("Reject", PermissionOptionKind::RejectOnce),
                ReplyOption::Never => (
                    "Reject for this session",
                    PermissionOptionKind::RejectAlways,
                ),
                ReplyOption::Project | ReplyOption::RejectWithFeedback => return None,
            };
            Some(PermissionOption::new(
                o.as_str().to_string(),
                name.to_string(),
                kind,
            ))
        })
        .collect()
}

/// The reply an option id stands for (`once`, `session`, `deny`, `never`).
pub fn reply_for(option_id: &str) -> Option<PermissionReplyKind> {
    Some(match option_id {
        "once" => PermissionReplyKind::Once,
        "session" => PermissionReplyKind::Session,
        "deny" => PermissionReplyKind::Deny,
        "never" => PermissionReplyKind::Never,
        _ => return None,
    })
}

/// A prompt's blocks as the text of a user message: text as it is, a
/// resource link as `@path` (a file of the project) or its URI, an
/// embedded text resource as a fenced block.
pub fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for b in blocks {
        let piece = match b {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::ResourceLink(l) => match l.uri.strip_prefix("file://") {
                Some(path) => format!("@{path}"),
                None => l.uri.clone(),
            },
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    format!("{}:\n```\n{}\n```", t.uri, t.text)
                }
                _ => continue,
            },
            _ => continue,
        };
        if !out.is_empty() && !out.ends_with(char::is_whitespace) {
            out.push(' ');
        }
        out.push_str(&piece);
    }
    out
}

fn text_block(s: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(s.to_string()))
}

/// The todo list as an ACP plan.
pub fn plan_entries(todos: &[mia_core::Todo]) -> Vec<PlanEntry> {
    todos
        .iter()
        .filter(|t| t.status != mia_core::TodoStatus::Cancelled)
        .map(|t| {
            let status = match t.status {
                mia_core::TodoStatus::InProgress => PlanEntryStatus::InProgress,
                mia_core::TodoStatus::Done => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            };
            PlanEntry::new(t.content.clone(), PlanEntryPriority::Medium, status)
        })
        .collect()
}

/// A stored session as the updates `session/load` replays: what the
/// person wrote, the agent's text and thoughts, each call and its result.
pub fn replay(messages: &[Message], cwd: &std::path::Path) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    for m in messages {
        for p in &m.parts {
            match (&m.role, &p.content) {
                (
                    Role::User,
                    PartContent::Text {
                        text,
                        synthetic: false,
                    },
                ) => {
                    out.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                        text_block(text),
                    )));
                }
                (Role::Assistant, PartContent::Text { text, .. }) => {
                    out.push(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                        text_block(text),
                    )));
                }
                (Role::Assistant, PartContent::Reasoning { text, .. }) => {
                    out.push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                        text_block(text),
                    )));
                }
                (
                    _,
                    PartContent::ToolCall {
                        call_id,
                        tool,
                        input,
                        ..
                    },
                ) => {
                    out.push(SessionUpdate::ToolCall(tool_call(
                        call_id, tool, input, cwd,
                    )));
                }
                (
                    _,
                    PartContent::ToolResult {
                        call_id,
                        output,
                        is_error,
                        ..
                    },
                ) => {
                    out.push(SessionUpdate::ToolCallUpdate(tool_result(
                        call_id, output, *is_error, None,
                    )));
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn options_and_replies_round_trip() {
        let opts = permission_options(&[
            ReplyOption::Once,
            ReplyOption::Session,
            ReplyOption::Project,
            ReplyOption::Deny,
            ReplyOption::Never,
            ReplyOption::RejectWithFeedback,
        ]);
        assert_eq!(opts.len(), 4);
        let kinds: Vec<_> = opts.iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            vec![
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
                PermissionOptionKind::RejectOnce,
                PermissionOptionKind::RejectAlways
            ]
        );
        for o in &opts {
            assert!(reply_for(&o.option_id.0).is_some());
        }
        assert_eq!(reply_for("session"), Some(PermissionReplyKind::Session));
        assert_eq!(reply_for("never"), Some(PermissionReplyKind::Never));
        assert_eq!(reply_for("project"), None);
    }

    #[test]
    fn titles_and_kinds() {
        let input = serde_json::json!({"command": "cargo test"});
        assert_eq!(tool_title("bash", &input), "bash: cargo test");
        assert_eq!(tool_kind("edit"), ToolKind::Edit);
        assert_eq!(stop_reason(TurnEnd::Cancelled), Some(StopReason::Cancelled));
        assert_eq!(stop_reason(TurnEnd::Error), None);
    }
}
