//! From a stored session to the share payload (before redaction).

use std::collections::HashSet;

use mia_protocol::{
    Message, MessageType, PartContent, Role, SHARE_PAYLOAD_VERSION, Session, SharePayload,
    SharedDiff, SharedMessage, SharedMessageMeta, SharedPart, SharedSession,
};

/// What goes into the payload.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// `share.includeToolResults` (default true).
    pub include_tool_results: bool,
    /// `share.includeDiffs` (default true).
    pub include_diffs: bool,
    pub exclude_messages: HashSet<String>,
    pub exclude_tool_results: HashSet<String>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            include_tool_results: true,
            include_diffs: true,
            exclude_messages: HashSet::new(),
            exclude_tool_results: HashSet::new(),
        }
    }
}

/// The payload of `session`: its user and assistant messages (compacted ones
/// too: a reader sees the whole conversation), tool calls and results, and
/// `diffs` when they are included. `project` is the project's name only.
pub fn build(
    session: &Session,
    project: &str,
    messages: &[Message],
    diffs: Vec<SharedDiff>,
    opts: &BuildOptions,
) -> SharePayload {
    let mut out = Vec::new();
    for m in messages {
        let id = m.id.to_string();
        if opts.exclude_messages.contains(&id) || m.role == Role::System {
            continue;
        }
        let parts: Vec<SharedPart> = m
            .parts
            .iter()
            .filter_map(|p| part(&p.content, m.message_type, opts))
            .collect();
        if parts.is_empty() {
            continue;
        }
        let meta = &m.metadata;
        let metadata = (meta.model.is_some()
            || meta.tokens.is_some()
            || meta.duration_ms.is_some())
        .then(|| SharedMessageMeta {
            model: meta.model.clone(),
            agent: meta.agent.clone(),
            tokens: meta.tokens.as_ref().map(|t| t.input + t.output),
            duration_ms: meta.duration_ms,
        });
        out.push(SharedMessage {
            id,
            role: match m.role {
                Role::User => "user",
                _ => "assistant",
            }
            .into(),
            parts,
            metadata,
            created_at: m.created_at,
        });
    }
    SharePayload {
        version: SHARE_PAYLOAD_VERSION.into(),
        session: SharedSession {
            id: session.id.to_string(),
            title: session.title.clone(),
            project: project.to_string(),
            created_at: session.created_at,
            updated_at: Some(session.updated_at),
            model: session.model.clone(),
            agent: session.agent.clone(),
        },
        messages: out,
        diffs: if opts.include_diffs {
            diffs
        } else {
            Vec::new()
        },
    }
}

fn part(content: &PartContent, kind: MessageType, opts: &BuildOptions) -> Option<SharedPart> {
    Some(match content {
        PartContent::Text { text, synthetic } => {
            // Synthetic text is what the runtime added (a mentioned file's
            // content, a reminder), not what anyone wrote.
            if *synthetic || text.trim().is_empty() {
                return None;
            }
            if kind == MessageType::CompactionSummary {
                SharedPart::Summary {
                    content: text.clone(),
                }
            } else {
                SharedPart::Text {
                    content: text.clone(),
                }
            }
        }
        PartContent::Reasoning { text, .. } if !text.trim().is_empty() => SharedPart::Reasoning {
            content: text.clone(),
        },
        PartContent::ToolCall {
            call_id,
            tool,
            input,
            ..
        } => SharedPart::ToolCall {
            call_id: call_id.clone(),
            name: tool.clone(),
            args: input.clone(),
        },
        PartContent::ToolResult {
            call_id,
            tool,
            output,
            is_error,
            duration_ms,
            ..
        } => {
            let omitted =
                !opts.include_tool_results || opts.exclude_tool_results.contains(call_id.as_str());
            SharedPart::ToolResult {
                call_id: call_id.clone(),
                name: tool.clone(),
                output: if omitted {
                    String::new()
                } else {
                    output.clone()
                },
                is_error: *is_error,
                duration_ms: *duration_ms,
                omitted,
            }
        }
        PartContent::Error { message, .. } => SharedPart::Error {
            message: message.clone(),
        },
        PartContent::CompactionSummary { summary, .. } => SharedPart::Summary {
            content: summary.clone(),
        },
        PartContent::File { path, .. } => SharedPart::Text {
            content: format!("Attached file: `{path}`"),
        },
        PartContent::Image { .. } => SharedPart::Text {
            content: "(an image, not shared)".into(),
        },
        _ => return None,
    })
}

/// Tool call ids in `payload` that read an `.env`-style file (their output
/// is redacted value by value).
pub fn env_file_calls(messages: &[Message]) -> HashSet<String> {
    let mut calls = HashSet::new();
    for m in messages {
        for p in &m.parts {
            if let PartContent::ToolCall { call_id, input, .. } = &p.content {
                let reads_env = ["path", "file_path", "filePath"]
                    .iter()
                    .filter_map(|k| input.get(*k).and_then(|v| v.as_str()))
                    .any(crate::redact::is_env_file);
                let cats_env = input
                    .get("command")
                    .and_then(|v| v.as_str())
                    .is_some_and(|c| c.split_whitespace().any(crate::redact::is_env_file));
                if reads_env || cats_env {
                    calls.insert(call_id.clone());
                }
            }
        }
    }
    calls
}
