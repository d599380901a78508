//! Anthropic Messages API (`POST /v1/messages`, `stream: true`).

use std::collections::HashMap;

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::catalog;
use crate::client::{Decoded, Decoder, HttpCall, Wire};
use crate::error::ProviderError;
use crate::sse::SseEvent;
use crate::types::{
    ChatMessage, ChatRequest, ChatRole, ContentPart, StopReason, StreamEvent, TokenUsage,
};
use crate::wire_common::{
    classify_http, error_info, invalid, join_url, parse_arguments, parse_json, str_at, u64_at,
};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const API_VERSION: &str = "2023-06-01";

pub(crate) struct AnthropicWire {
    pub provider: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub extra_headers: Vec<(String, String)>,
    /// Put `cache_control` breakpoints on the system prompt and the
    /// conversation prefix.
    pub prompt_caching: bool,
}

impl Wire for AnthropicWire {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn base_url(&self) -> &str {
        &self.base_url
    }

    fn build(&self, request: &ChatRequest) -> Result<HttpCall, ProviderError> {
        let body = request_body(request, self.prompt_caching);
        let mut headers = vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("accept".to_string(), "text/event-stream".to_string()),
            ("anthropic-version".to_string(), API_VERSION.to_string()),
        ];
        if let Some(key) = &self.api_key {
            headers.push(("x-api-key".to_string(), key.clone()));
        }
        headers.extend(self.extra_headers.iter().cloned());
        Ok(HttpCall {
            url: join_url(&self.base_url, "v1/messages"),
            headers,
            body: serde_json::to_vec(&body)
                .map_err(|e| invalid(&self.provider, e))?
                .into(),
        })
    }

    fn classify_http(&self, status: u16, headers: &HeaderMap, body: &str) -> ProviderError {
        classify_http(&self.provider, status, headers, body)
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(AnthropicDecoder::new(self.provider.clone()))
    }
}

/// Build the JSON body of a Messages request.
pub fn request_body(request: &ChatRequest, prompt_caching: bool) -> Value {
    let max_tokens = request.max_tokens.unwrap_or_else(|| {
        catalog::builtin()
            .lookup("anthropic", &request.model)
            .map(|m| m.max_output)
            .unwrap_or(8_192)
    });
    let mut body = json!({
        "model": catalog::builtin().wire_id("anthropic", &request.model),
        "max_tokens": max_tokens,
        "stream": true,
    });
    let cache = json!({"type": "ephemeral"});
    if !request.system.is_empty() {
        let mut block = json!({"type": "text", "text": request.system});
        if prompt_caching {
            block["cache_control"] = cache.clone();
        }
        body["system"] = json!([block]);
    }
    let mut messages = convert_messages(&request.messages);
    if prompt_caching {
        // Breakpoints on the last two messages: the newest one caches the
        // whole prefix for the next turn, the one before it reads the
        // prefix cached by the previous turn. With the system breakpoint
        // that is three of the four Anthropic allows.
        let n = messages.len();
        for m in messages.iter_mut().skip(n.saturating_sub(2)) {
            if let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut)
                && let Some(last) = blocks
                    .iter_mut()
                    .rev()
                    .find(|b| !matches!(str_at(b, "type"), Some("thinking" | "redacted_thinking")))
            {
                last["cache_control"] = cache.clone();
            }
        }
    }
    body["messages"] = Value::Array(messages);
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
    }
    let mut thinking = false;
    if let Some(effort) = request.reasoning_effort
        && max_tokens > 1_024 + 1
        && catalog::builtin().accepts_reasoning("anthropic", &request.model)
        && !open_tool_turn_without_thinking(&body["messages"])
    {
        let budget = effort.budget_tokens().min(max_tokens - 1).max(1_024);
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        thinking = true;
    }
    // Extended thinking only accepts the default temperature.
    if let Some(t) = request.temperature
        && !thinking
    {
        body["temperature"] = json!(t);
    }
    body
}

/// With thinking on, the API requires the assistant message that made the
/// pending tool calls to start with its (signed) thinking block. When that
/// block is not available (e.g. reasoning stored without its signature),
/// thinking is left off for this request rather than sending one the API
/// rejects.
fn open_tool_turn_without_thinking(messages: &Value) -> bool {
    let Some(last_assistant) = messages.as_array().and_then(|m| {
        m.iter()
            .rev()
            .find(|m| str_at(m, "role") == Some("assistant"))
    }) else {
        return false;
    };
    let blocks = last_assistant
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let has_tool_use = blocks.iter().any(|b| str_at(b, "type") == Some("tool_use"));
    let starts_with_thinking = blocks
        .first()
        .is_some_and(|b| matches!(str_at(b, "type"), Some("thinking" | "redacted_thinking")));
    has_tool_use && !starts_with_thinking
}

fn convert_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut last_role: Option<ChatRole> = None;
    for m in messages {
        let mut blocks: Vec<Value> = Vec::new();
        let mut results: Vec<Value> = Vec::new();
        for part in &m.content {
            match (m.role, part) {
                (_, ContentPart::Text { text }) => {
                    if !text.trim().is_empty() {
                        blocks.push(json!({"type": "text", "text": text}));
                    }
                }
                (_, ContentPart::Image { media_type, data }) => blocks.push(json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": media_type, "data": data},
                })),
                (ChatRole::Assistant, ContentPart::Reasoning { text, signature }) => {
                    // Unsigned thinking cannot be sent back; it is dropped.
                    if let Some(sig) = signature {
                        blocks
                            .push(json!({"type": "thinking", "thinking": text, "signature": sig}));
                    }
                }
                (ChatRole::Assistant, ContentPart::RedactedReasoning { data }) => {
                    blocks.push(json!({"type": "redacted_thinking", "data": data}));
                }
                (ChatRole::User, ContentPart::Reasoning { .. })
                | (ChatRole::User, ContentPart::RedactedReasoning { .. }) => {}
                (
                    _,
                    ContentPart::ToolCall {
                        id, name, input, ..
                    },
                ) => blocks.push(json!({
                    "type": "tool_use", "id": id, "name": name, "input": input,
                })),
                (
                    _,
                    ContentPart::ToolResult {
                        call_id,
                        content,
                        is_error,
                        ..
                    },
                ) => {
                    let content = if content.is_empty() {
                        "(no output)"
                    } else {
                        content
                    };
                    results.push(json!({
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": content,
                        "is_error": is_error,
                    }));
                }
            }
        }
        // Tool results must come first in a user message.
        results.extend(blocks);
        let blocks = results;
        if blocks.is_empty() {
            continue;
        }
        let role = match m.role {
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        };
        if last_role == Some(m.role)
            && let Some(prev) = out.last_mut().and_then(|p| p.get_mut("content"))
            && let Some(prev) = prev.as_array_mut()
        {
            prev.extend(blocks);
            continue;
        }
        out.push(json!({"role": role, "content": blocks}));
        last_role = Some(m.role);
    }
    out
}

enum Block {
    Text,
    Thinking,
    ToolUse {
        index: u32,
        id: String,
        name: String,
        args: String,
    },
    Other,
}

pub(crate) struct AnthropicDecoder {
    provider: String,
    blocks: HashMap<u64, Block>,
    usage: TokenUsage,
    stop: Option<StopReason>,
    tool_calls: u32,
}

impl AnthropicDecoder {
    pub(crate) fn new(provider: String) -> Self {
        Self {
            provider,
            blocks: HashMap::new(),
            usage: TokenUsage::default(),
            stop: None,
            tool_calls: 0,
        }
    }

    fn read_usage(&mut self, u: &Value) {
        if let Some(v) = u64_at(u, "input_tokens") {
            self.usage.input = v;
        }
        if let Some(v) = u64_at(u, "output_tokens") {
            self.usage.output = v;
        }
        if let Some(v) = u64_at(u, "cache_read_input_tokens") {
            self.usage.cache_read = v;
        }
        if let Some(v) = u64_at(u, "cache_creation_input_tokens") {
            self.usage.cache_write = v;
        }
    }

    fn stream_error(&self, v: &Value) -> ProviderError {
        let info = error_info(v);
        let status = match info.codes.first().map(String::as_str) {
            Some("overloaded_error") => 529,
            Some("rate_limit_error") => 429,
            Some("authentication_error") => 401,
            Some("permission_error") => 403,
            Some("not_found_error") => 404,
            Some("request_too_large") => 413,
            Some("invalid_request_error") => 400,
            _ => 500,
        };
        crate::error::HttpFailure {
            provider: &self.provider,
            status,
            retry_after: None,
            message: if info.message.is_empty() {
                "error event without a message".into()
            } else {
                info.message
            },
            codes: info.codes,
        }
        .classify()
    }
}

fn stop_reason(s: &str) -> StopReason {
    match s {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_string()),
    }
}

impl Decoder for AnthropicDecoder {
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Decoded, ProviderError> {
        let v = parse_json(&self.provider, &event.data)?;
        let kind = str_at(&v, "type")
            .or(event.event.as_deref())
            .unwrap_or_default();
        match kind {
            "message_start" => {
                if let Some(u) = v.get("message").and_then(|m| m.get("usage")) {
                    self.read_usage(u);
                }
            }
            "content_block_start" => {
                let index = u64_at(&v, "index").unwrap_or(0);
                let block = v.get("content_block").cloned().unwrap_or(Value::Null);
                let new = match str_at(&block, "type") {
                    Some("text") => {
                        if let Some(t) = str_at(&block, "text").filter(|t| !t.is_empty()) {
                            out.push(StreamEvent::TextDelta { text: t.into() });
                        }
                        Block::Text
                    }
                    Some("thinking") => {
                        if let Some(t) = str_at(&block, "thinking").filter(|t| !t.is_empty()) {
                            out.push(StreamEvent::ReasoningDelta { text: t.into() });
                        }
                        Block::Thinking
                    }
                    Some("redacted_thinking") => {
                        out.push(StreamEvent::RedactedReasoning {
                            data: str_at(&block, "data").unwrap_or_default().into(),
                        });
                        Block::Other
                    }
                    Some("tool_use") => {
                        let id = str_at(&block, "id").unwrap_or_default().to_string();
                        let name = str_at(&block, "name").unwrap_or_default().to_string();
                        if id.is_empty() || name.is_empty() {
                            return Err(invalid(
                                &self.provider,
                                "tool_use block without id or name",
                            ));
                        }
                        let tool_index = self.tool_calls;
                        self.tool_calls += 1;
                        out.push(StreamEvent::ToolCallStart {
                            index: tool_index,
                            id: id.clone(),
                            name: name.clone(),
                        });
                        // Non-empty inline input (not used when streaming,
                        // but allowed by the format).
                        let args = match block.get("input") {
                            Some(Value::Object(m)) if !m.is_empty() => {
                                Value::Object(m.clone()).to_string()
                            }
                            _ => String::new(),
                        };
                        Block::ToolUse {
                            index: tool_index,
                            id,
                            name,
                            args,
                        }
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index, new);
            }
            "content_block_delta" => {
                let index = u64_at(&v, "index").unwrap_or(0);
                let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                let block = self.blocks.get_mut(&index);
                match (str_at(&delta, "type"), block) {
                    (Some("text_delta"), _) => {
                        let text = str_at(&delta, "text").unwrap_or_default();
                        if !text.is_empty() {
                            out.push(StreamEvent::TextDelta { text: text.into() });
                        }
                    }
                    (Some("thinking_delta"), _) => {
                        let text = str_at(&delta, "thinking").unwrap_or_default();
                        if !text.is_empty() {
                            out.push(StreamEvent::ReasoningDelta { text: text.into() });
                        }
                    }
                    (Some("signature_delta"), _) => {
                        out.push(StreamEvent::ReasoningSignature {
                            signature: str_at(&delta, "signature").unwrap_or_default().into(),
                        });
                    }
                    (
                        Some("input_json_delta"),
                        Some(Block::ToolUse {
                            index, id, args, ..
                        }),
                    ) => {
                        let fragment = str_at(&delta, "partial_json").unwrap_or_default();
                        if !fragment.is_empty() {
                            args.push_str(fragment);
                            out.push(StreamEvent::ToolCallDelta {
                                index: *index,
                                id: id.clone(),
                                arguments: fragment.into(),
                            });
                        }
                    }
                    (Some("input_json_delta"), _) => {
                        return Err(invalid(
                            &self.provider,
                            format_args!(
                                "input_json_delta for block {index}, which is not a tool_use block"
                            ),
                        ));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = u64_at(&v, "index").unwrap_or(0);
                if let Some(Block::ToolUse {
                    index,
                    id,
                    name,
                    args,
                }) = self.blocks.remove(&index)
                {
                    let input = parse_arguments(&self.provider, &name, &args)?;
                    out.push(StreamEvent::ToolCallEnd {
                        index,
                        id,
                        name,
                        input,
                        signature: None,
                    });
                }
            }
            "message_delta" => {
                if let Some(reason) = v
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop = Some(stop_reason(reason));
                }
                if let Some(u) = v.get("usage") {
                    self.read_usage(u);
                }
            }
            "message_stop" => {
                out.push(StreamEvent::Usage { usage: self.usage });
                out.push(StreamEvent::Stop {
                    reason: self.stop.clone().unwrap_or(StopReason::EndTurn),
                });
                return Ok(Decoded::Done);
            }
            "error" => return Err(self.stream_error(&v)),
            // `ping` and event types added after this client was written.
            _ => {}
        }
        Ok(Decoded::Continue)
    }

    fn on_eof(&mut self, _out: &mut Vec<StreamEvent>) -> Result<bool, ProviderError> {
        Ok(false)
    }

    fn usage_so_far(&self) -> Option<TokenUsage> {
        (self.usage != TokenUsage::default()).then_some(self.usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ReasoningEffort, ToolDefinition};

    #[test]
    fn body_has_cache_breakpoints_thinking_and_tool_results_first() {
        let mut req = ChatRequest::new(
            "claude-sonnet-4-20250514",
            vec![
                ChatMessage::user("list files"),
                ChatMessage {
                    role: ChatRole::Assistant,
                    content: vec![
                        ContentPart::Reasoning {
                            text: "think".into(),
                            signature: Some("sig".into()),
                        },
                        ContentPart::ToolCall {
                            id: "toolu_1".into(),
                            name: "glob".into(),
                            input: json!({"pattern": "*"}),
                            signature: None,
                        },
                    ],
                },
                ChatMessage {
                    role: ChatRole::User,
                    content: vec![
                        ContentPart::text("and then?"),
                        ContentPart::ToolResult {
                            call_id: "toolu_1".into(),
                            name: "glob".into(),
                            content: "a.rs".into(),
                            is_error: false,
                        },
                        ContentPart::text(""),
                    ],
                },
            ],
        );
        req.system = "You are mia.".into();
        req.tools = vec![ToolDefinition {
            name: "glob".into(),
            description: "find files".into(),
            input_schema: json!({"type": "object"}),
        }];
        req.reasoning_effort = Some(ReasoningEffort::Low);
        req.temperature = Some(0.2);
        req.max_tokens = Some(4096);
        let body = request_body(&req, true);
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(body["thinking"]["budget_tokens"], 2048);
        assert!(
            body.get("temperature").is_none(),
            "thinking forbids temperature"
        );
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert!(msgs[0]["content"][0].get("cache_control").is_none());
        // assistant: thinking first, breakpoint on the tool_use block
        assert_eq!(msgs[1]["content"][0]["type"], "thinking");
        assert!(msgs[1]["content"][0].get("cache_control").is_none());
        assert_eq!(msgs[1]["content"][1]["cache_control"]["type"], "ephemeral");
        // user: tool_result first, empty text dropped
        let user = msgs[2]["content"].as_array().unwrap();
        assert_eq!(user.len(), 2);
        assert_eq!(user[0]["type"], "tool_result");
        assert_eq!(user[1]["text"], "and then?");
        assert_eq!(user[1]["cache_control"]["type"], "ephemeral");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    }

    #[test]
    fn thinking_stays_off_when_the_tool_turn_lost_its_signature() {
        let call = ContentPart::ToolCall {
            id: "t".into(),
            name: "glob".into(),
            input: json!({}),
            signature: None,
        };
        let result = ContentPart::ToolResult {
            call_id: "t".into(),
            name: "glob".into(),
            content: "x".into(),
            is_error: false,
        };
        let mut req = ChatRequest::new(
            "claude-sonnet-4-20250514",
            vec![
                ChatMessage::user("go"),
                ChatMessage {
                    role: ChatRole::Assistant,
                    content: vec![
                        ContentPart::Reasoning {
                            text: "unsigned".into(),
                            signature: None,
                        },
                        call.clone(),
                    ],
                },
                ChatMessage {
                    role: ChatRole::User,
                    content: vec![result.clone()],
                },
            ],
        );
        req.reasoning_effort = Some(ReasoningEffort::Medium);
        req.max_tokens = Some(16_000);
        assert!(request_body(&req, false).get("thinking").is_none());
        // With the signature the thinking block is replayed and thinking stays on.
        req.messages[1].content[0] = ContentPart::Reasoning {
            text: "signed".into(),
            signature: Some("sig".into()),
        };
        let body = request_body(&req, false);
        assert_eq!(body["thinking"]["budget_tokens"], 8192);
        assert_eq!(body["messages"][1]["content"][0]["type"], "thinking");
    }

    #[test]
    fn consecutive_same_role_messages_are_merged() {
        let req = ChatRequest::new(
            "claude-x",
            vec![ChatMessage::user("a"), ChatMessage::user("b")],
        );
        let body = request_body(&req, false);
        assert_eq!(body["messages"].as_array().unwrap().len(), 1);
        assert_eq!(body["messages"][0]["content"].as_array().unwrap().len(), 2);
        assert_eq!(body["max_tokens"], 8192, "unknown model gets the default");
    }
}
