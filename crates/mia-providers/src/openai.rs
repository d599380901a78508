//! OpenAI Chat Completions streaming (`POST {base}/chat/completions`), also
//! used for every OpenAI-compatible server (Ollama, LM Studio, OpenRouter,
//! vLLM, ...).

use std::collections::BTreeMap;

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::client::{Decoded, Decoder, HttpCall, Wire};
use crate::error::{HttpFailure, ProviderError};
use crate::sse::SseEvent;
use crate::types::{
    ChatMessage, ChatRequest, ChatRole, ContentPart, StopReason, StreamEvent, TokenUsage,
};
use crate::wire_common::{
    classify_http, error_info, invalid, join_url, parse_arguments, parse_json, str_at, u64_at,
};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Which field carries the output limit: OpenAI's own API wants
/// `max_completion_tokens` (required for reasoning models); most compatible
/// servers only know `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    MaxCompletionTokens,
    MaxTokens,
}

pub(crate) struct OpenAiWire {
    pub provider: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub extra_headers: Vec<(String, String)>,
    pub max_tokens_field: MaxTokensField,
}

impl Wire for OpenAiWire {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn base_url(&self) -> &str {
        &self.base_url
    }

    fn build(&self, request: &ChatRequest) -> Result<HttpCall, ProviderError> {
        let body = request_body(request, self.max_tokens_field);
        let mut headers = vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("accept".to_string(), "text/event-stream".to_string()),
        ];
        if let Some(key) = &self.api_key {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        headers.extend(self.extra_headers.iter().cloned());
        Ok(HttpCall {
            url: join_url(&self.base_url, "chat/completions"),
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
        Box::new(OpenAiDecoder::new(self.provider.clone()))
    }
}

/// Build the JSON body of a streaming Chat Completions request.
pub fn request_body(request: &ChatRequest, max_tokens_field: MaxTokensField) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for m in &request.messages {
        convert_message(m, &mut messages);
    }
    let mut body = json!({
        "model": crate::catalog::builtin().wire_id("openai", &request.model),
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema,
                }})
            })
            .collect();
    }
    // OpenAI's reasoning models reject both a non-default temperature and
    // (the other way round) `reasoning_effort` on non-reasoning models.
    let reasoning_model = crate::catalog::builtin()
        .lookup("openai", &request.model)
        .map(|m| m.reasoning);
    if let Some(t) = request.temperature
        && reasoning_model != Some(true)
    {
        body["temperature"] = json!(t);
    }
    if let Some(max) = request.max_tokens {
        let field = match max_tokens_field {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        };
        body[field] = json!(max);
    }
    if let Some(effort) = request.reasoning_effort
        && reasoning_model != Some(false)
    {
        body["reasoning_effort"] = json!(effort.as_str());
    }
    body
}

fn convert_message(m: &ChatMessage, out: &mut Vec<Value>) {
    match m.role {
        ChatRole::User => {
            let mut parts = Vec::new();
            let mut has_image = false;
            for part in &m.content {
                match part {
                    ContentPart::ToolResult {
                        call_id, content, ..
                    } => out
                        .push(json!({"role": "tool", "tool_call_id": call_id, "content": content})),
                    ContentPart::Text { text } if !text.trim().is_empty() => {
                        parts.push(json!({"type": "text", "text": text}));
                    }
                    ContentPart::Image { media_type, data } => {
                        has_image = true;
                        parts.push(json!({"type": "image_url", "image_url": {
                            "url": format!("data:{media_type};base64,{data}"),
                        }}));
                    }
                    _ => {}
                }
            }
            if parts.is_empty() {
                return;
            }
            if has_image {
                out.push(json!({"role": "user", "content": parts}));
            } else {
                let text: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect();
                out.push(json!({"role": "user", "content": text.join("\n\n")}));
            }
        }
        ChatRole::Assistant => {
            let mut text = String::new();
            let mut calls = Vec::new();
            for part in &m.content {
                match part {
                    ContentPart::Text { text: t } => text.push_str(t),
                    ContentPart::ToolCall {
                        id, name, input, ..
                    } => calls.push(json!({
                        "id": id, "type": "function",
                        "function": {"name": name, "arguments": input.to_string()},
                    })),
                    _ => {}
                }
            }
            if text.trim().is_empty() && calls.is_empty() {
                return;
            }
            let mut msg = json!({"role": "assistant"});
            msg["content"] = if text.trim().is_empty() {
                Value::Null
            } else {
                json!(text)
            };
            if !calls.is_empty() {
                msg["tool_calls"] = Value::Array(calls);
            }
            out.push(msg);
        }
    }
}

#[derive(Default)]
struct PendingCall {
    id: String,
    name: String,
    args: String,
    started: bool,
    /// Argument fragments that arrived before the id and name.
    early: Vec<String>,
}

pub(crate) struct OpenAiDecoder {
    provider: String,
    calls: BTreeMap<u64, PendingCall>,
    usage: Option<TokenUsage>,
    finish: Option<StopReason>,
    finished_calls: bool,
    next_call_index: u32,
    call_order: BTreeMap<u64, u32>,
}

impl OpenAiDecoder {
    pub(crate) fn new(provider: String) -> Self {
        Self {
            provider,
            calls: BTreeMap::new(),
            usage: None,
            finish: None,
            finished_calls: false,
            next_call_index: 0,
            call_order: BTreeMap::new(),
        }
    }

    fn call_index(&mut self, wire_index: u64) -> u32 {
        if let Some(i) = self.call_order.get(&wire_index) {
            return *i;
        }
        let i = self.next_call_index;
        self.next_call_index += 1;
        self.call_order.insert(wire_index, i);
        i
    }

    fn finish_calls(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.finished_calls {
            return Ok(());
        }
        self.finished_calls = true;
        let calls = std::mem::take(&mut self.calls);
        for (wire_index, call) in calls {
            let index = self.call_index(wire_index);
            if call.name.is_empty() {
                return Err(invalid(
                    &self.provider,
                    "a tool call without a function name",
                ));
            }
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            if !call.started {
                out.push(StreamEvent::ToolCallStart {
                    index,
                    id: id.clone(),
                    name: call.name.clone(),
                });
                if !call.args.is_empty() {
                    out.push(StreamEvent::ToolCallDelta {
                        index,
                        id: id.clone(),
                        arguments: call.args.clone(),
                    });
                }
            }
            let input = parse_arguments(&self.provider, &call.name, &call.args)?;
            out.push(StreamEvent::ToolCallEnd {
                index,
                id,
                name: call.name,
                input,
                signature: None,
            });
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.finish_calls(out)?;
        if let Some(usage) = self.usage {
            out.push(StreamEvent::Usage { usage });
        }
        out.push(StreamEvent::Stop {
            reason: self.finish.clone().unwrap_or(StopReason::EndTurn),
        });
        Ok(())
    }

    fn stream_error(&self, v: &Value) -> ProviderError {
        let info = error_info(v);
        let code = |c: &str| info.codes.iter().any(|x| x == c);
        let status = if code("insufficient_quota") || code("rate_limit_exceeded") {
            429
        } else if code("invalid_request_error") || code("context_length_exceeded") {
            400
        } else {
            info.codes
                .iter()
                .find_map(|c| c.parse::<u16>().ok())
                .unwrap_or(500)
        };
        HttpFailure {
            provider: &self.provider,
            status,
            retry_after: None,
            message: if info.message.is_empty() {
                "error in stream without a message".into()
            } else {
                info.message
            },
            codes: info.codes,
        }
        .classify()
    }

    fn tool_delta(
        &mut self,
        tc: &Value,
        position: usize,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let wire_index = u64_at(tc, "index").unwrap_or(position as u64);
        let index = self.call_index(wire_index);
        let call = self.calls.entry(wire_index).or_default();
        if let Some(id) = str_at(tc, "id").filter(|s| !s.is_empty()) {
            call.id = id.to_string();
        }
        let function = tc.get("function");
        if let Some(name) = function
            .and_then(|f| str_at(f, "name"))
            .filter(|s| !s.is_empty())
        {
            call.name = name.to_string();
        }
        let fragment = function
            .and_then(|f| str_at(f, "arguments"))
            .unwrap_or_default();
        if !call.started && !call.name.is_empty() {
            call.started = true;
            if call.id.is_empty() {
                call.id = format!("call_{index}");
            }
            out.push(StreamEvent::ToolCallStart {
                index,
                id: call.id.clone(),
                name: call.name.clone(),
            });
            for early in std::mem::take(&mut call.early) {
                out.push(StreamEvent::ToolCallDelta {
                    index,
                    id: call.id.clone(),
                    arguments: early,
                });
            }
        }
        if !fragment.is_empty() {
            call.args.push_str(fragment);
            if call.started {
                out.push(StreamEvent::ToolCallDelta {
                    index,
                    id: call.id.clone(),
                    arguments: fragment.to_string(),
                });
            } else {
                call.early.push(fragment.to_string());
            }
        }
        Ok(())
    }
}

fn stop_reason(s: &str) -> StopReason {
    match s {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_string()),
    }
}

impl Decoder for OpenAiDecoder {
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Decoded, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finish(out)?;
            return Ok(Decoded::Done);
        }
        if data.is_empty() {
            return Ok(Decoded::Continue);
        }
        let v = parse_json(&self.provider, data)?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(self.stream_error(&v));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            let prompt = u64_at(u, "prompt_tokens").unwrap_or(0);
            let cached = u
                .get("prompt_tokens_details")
                .and_then(|d| u64_at(d, "cached_tokens"))
                .unwrap_or(0);
            self.usage = Some(TokenUsage {
                input: prompt.saturating_sub(cached),
                output: u64_at(u, "completion_tokens").unwrap_or(0),
                cache_read: cached,
                cache_write: 0,
            });
        }
        let Some(choice) = v
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(Decoded::Continue);
        };
        if let Some(delta) = choice.get("delta") {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = str_at(delta, key).filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::ReasoningDelta { text: text.into() });
                }
            }
            if let Some(text) = str_at(delta, "content").filter(|t| !t.is_empty()) {
                out.push(StreamEvent::TextDelta { text: text.into() });
            }
            // A refusal is shown to the user like text (structured outputs).
            if let Some(text) = str_at(delta, "refusal").filter(|t| !t.is_empty()) {
                out.push(StreamEvent::TextDelta { text: text.into() });
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, tc) in calls.iter().enumerate() {
                    self.tool_delta(tc, position, out)?;
                }
            }
        }
        if let Some(reason) = str_at(choice, "finish_reason") {
            self.finish = Some(stop_reason(reason));
            self.finish_calls(out)?;
        }
        Ok(Decoded::Continue)
    }

    fn usage_so_far(&self) -> Option<TokenUsage> {
        self.usage
    }

    fn on_eof(&mut self, out: &mut Vec<StreamEvent>) -> Result<bool, ProviderError> {
        // Some compatible servers close the stream without `[DONE]`; a
        // received finish_reason still marks the response complete.
        if self.finish.is_some() {
            self.finish(out)?;
            return Ok(true);
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ReasoningEffort;

    #[test]
    fn tool_results_become_tool_messages_before_user_text() {
        let mut req = ChatRequest::new(
            "o3",
            vec![
                ChatMessage::user("hi"),
                ChatMessage {
                    role: ChatRole::Assistant,
                    content: vec![ContentPart::ToolCall {
                        id: "call_1".into(),
                        name: "read".into(),
                        input: json!({"path": "a"}),
                        signature: None,
                    }],
                },
                ChatMessage {
                    role: ChatRole::User,
                    content: vec![
                        ContentPart::ToolResult {
                            call_id: "call_1".into(),
                            name: "read".into(),
                            content: "data".into(),
                            is_error: false,
                        },
                        ContentPart::text("thanks"),
                    ],
                },
            ],
        );
        req.system = "sys".into();
        req.max_tokens = Some(100);
        req.reasoning_effort = Some(ReasoningEffort::High);
        let body = request_body(&req, MaxTokensField::MaxCompletionTokens);
        let msgs = body["messages"].as_array().unwrap();
        let roles: Vec<_> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
        assert!(msgs[2]["content"].is_null());
        assert_eq!(
            msgs[2]["tool_calls"][0]["function"]["arguments"],
            "{\"path\":\"a\"}"
        );
        assert_eq!(msgs[3]["tool_call_id"], "call_1");
        assert_eq!(body["max_completion_tokens"], 100);
        assert_eq!(body["reasoning_effort"], "high");
        assert_eq!(body["stream_options"]["include_usage"], true);
        let body = request_body(&req, MaxTokensField::MaxTokens);
        assert_eq!(body["max_tokens"], 100);
        assert!(body.get("temperature").is_none());
    }

    #[test]
    fn reasoning_effort_and_temperature_follow_the_model() {
        let mut req = ChatRequest::new("gpt-4.1", vec![ChatMessage::user("hi")]);
        req.reasoning_effort = Some(ReasoningEffort::Low);
        req.temperature = Some(0.3);
        let body = request_body(&req, MaxTokensField::MaxCompletionTokens);
        assert!(body.get("reasoning_effort").is_none(), "gpt-4.1 rejects it");
        assert_eq!(body["temperature"].as_f64(), Some(0.30000001192092896));
        req.model = "o3".into();
        let body = request_body(&req, MaxTokensField::MaxCompletionTokens);
        assert_eq!(body["reasoning_effort"], "low");
        assert!(
            body.get("temperature").is_none(),
            "o3 rejects a temperature"
        );
        req.model = "qwen3:8b".into();
        let body = request_body(&req, MaxTokensField::MaxTokens);
        assert_eq!(
            body["reasoning_effort"], "low",
            "unknown models get what was asked"
        );
        assert!(body.get("temperature").is_some());
    }
}
