//! Google Gemini API (`POST {base}/models/{model}:streamGenerateContent?alt=sse`).

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::client::{Decoded, Decoder, HttpCall, Wire};
use crate::error::{HttpFailure, ProviderError};
use crate::sse::SseEvent;
use crate::types::{
    ChatMessage, ChatRequest, ChatRole, ContentPart, StopReason, StreamEvent, TokenUsage,
};
use crate::wire_common::{
    classify_http, error_info, invalid, join_url, parse_json, str_at, u64_at,
};

pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

pub(crate) struct GeminiWire {
    pub provider: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub extra_headers: Vec<(String, String)>,
}

impl Wire for GeminiWire {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn base_url(&self) -> &str {
        &self.base_url
    }

    fn build(&self, request: &ChatRequest) -> Result<HttpCall, ProviderError> {
        let model = crate::catalog::builtin().wire_id("google", &request.model);
        let model = model.strip_prefix("models/").unwrap_or(&model);
        if model.is_empty() || model.contains(['/', '?', '#', ' ']) {
            return Err(ProviderError::BadRequest {
                provider: self.provider.clone(),
                status: 0,
                message: format!("{model:?} is not a valid Gemini model id"),
            });
        }
        let body = request_body(request);
        let mut headers = vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("accept".to_string(), "text/event-stream".to_string()),
        ];
        if let Some(key) = &self.api_key {
            headers.push(("x-goog-api-key".to_string(), key.clone()));
        }
        headers.extend(self.extra_headers.iter().cloned());
        Ok(HttpCall {
            url: join_url(
                &self.base_url,
                &format!("models/{model}:streamGenerateContent?alt=sse"),
            ),
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
        Box::new(GeminiDecoder::new(self.provider.clone()))
    }
}

/// Build the JSON body of a `streamGenerateContent` request.
pub fn request_body(request: &ChatRequest) -> Value {
    let mut contents: Vec<Value> = Vec::new();
    let mut last_role = None;
    for m in &request.messages {
        let parts = convert_parts(m);
        if parts.is_empty() {
            continue;
        }
        if last_role == Some(m.role)
            && let Some(prev) = contents
                .last_mut()
                .and_then(|c| c.get_mut("parts"))
                .and_then(Value::as_array_mut)
        {
            prev.extend(parts);
            continue;
        }
        let role = match m.role {
            ChatRole::User => "user",
            ChatRole::Assistant => "model",
        };
        contents.push(json!({"role": role, "parts": parts}));
        last_role = Some(m.role);
    }
    let mut body = json!({"contents": contents});
    if !request.system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": request.system}]});
    }
    if !request.tools.is_empty() {
        let decls: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "parametersJsonSchema": t.input_schema,
                })
            })
            .collect();
        body["tools"] = json!([{"functionDeclarations": decls}]);
    }
    let mut config = serde_json::Map::new();
    if let Some(t) = request.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(max) = request.max_tokens {
        config.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(effort) = request.reasoning_effort
        && crate::catalog::builtin().accepts_reasoning("google", &request.model)
    {
        config.insert(
            "thinkingConfig".into(),
            json!({"includeThoughts": true, "thinkingBudget": effort.budget_tokens()}),
        );
    }
    if !config.is_empty() {
        body["generationConfig"] = Value::Object(config);
    }
    body
}

fn convert_parts(m: &ChatMessage) -> Vec<Value> {
    let mut parts = Vec::new();
    for part in &m.content {
        match part {
            ContentPart::Text { text } if !text.trim().is_empty() => {
                parts.push(json!({"text": text}));
            }
            ContentPart::Image { media_type, data } => {
                parts.push(json!({"inlineData": {"mimeType": media_type, "data": data}}));
            }
            ContentPart::ToolCall {
                id,
                name,
                input,
                signature,
            } if m.role == ChatRole::Assistant => {
                let mut call = json!({"name": name, "args": input});
                if !id.starts_with(GENERATED_ID_PREFIX) {
                    call["id"] = json!(id);
                }
                let mut p = json!({"functionCall": call});
                if let Some(sig) = signature {
                    p["thoughtSignature"] = json!(sig);
                }
                parts.push(p);
            }
            ContentPart::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => {
                let key = if *is_error { "error" } else { "output" };
                let mut resp = json!({"name": name, "response": {key: content}});
                if !call_id.starts_with(GENERATED_ID_PREFIX) {
                    resp["id"] = json!(call_id);
                }
                parts.push(json!({"functionResponse": resp}));
            }
            _ => {}
        }
    }
    parts
}

/// Prefix of ids made up for function calls that came without one; such ids
/// are not sent back to the API.
const GENERATED_ID_PREFIX: &str = "gemini-call-";

pub(crate) struct GeminiDecoder {
    provider: String,
    usage: Option<TokenUsage>,
    finish: Option<StopReason>,
    tool_calls: u32,
    id_salt: u32,
}

impl GeminiDecoder {
    pub(crate) fn new(provider: String) -> Self {
        Self {
            provider,
            usage: None,
            finish: None,
            tool_calls: 0,
            id_salt: rand::random::<u32>(),
        }
    }

    fn stream_error(&self, v: &Value) -> ProviderError {
        let info = error_info(v);
        let status = info
            .codes
            .iter()
            .find_map(|c| c.parse::<u16>().ok())
            .unwrap_or(500);
        HttpFailure {
            provider: &self.provider,
            status,
            retry_after: info.retry_delay,
            message: if info.message.is_empty() {
                "error in stream without a message".into()
            } else {
                info.message
            },
            codes: info.codes,
        }
        .classify()
    }
}

fn finish_reason(s: &str) -> StopReason {
    match s {
        "STOP" => StopReason::EndTurn,
        "MAX_TOKENS" => StopReason::MaxTokens,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            StopReason::ContentFilter
        }
        other => StopReason::Other(other.to_ascii_lowercase()),
    }
}

impl Decoder for GeminiDecoder {
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Decoded, ProviderError> {
        let v = parse_json(&self.provider, &event.data)?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(self.stream_error(&v));
        }
        if let Some(u) = v.get("usageMetadata") {
            let prompt = u64_at(u, "promptTokenCount").unwrap_or(0);
            let cached = u64_at(u, "cachedContentTokenCount").unwrap_or(0);
            let output = u64_at(u, "candidatesTokenCount").unwrap_or(0)
                + u64_at(u, "thoughtsTokenCount").unwrap_or(0);
            self.usage = Some(TokenUsage {
                input: prompt.saturating_sub(cached),
                output,
                cache_read: cached,
                cache_write: 0,
            });
        }
        if let Some(reason) = v
            .get("promptFeedback")
            .and_then(|f| str_at(f, "blockReason"))
        {
            tracing::warn!(provider = %self.provider, reason, "prompt blocked");
            self.finish = Some(StopReason::ContentFilter);
        }
        let Some(candidate) = v
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(Decoded::Continue);
        };
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            if let Some(call) = part.get("functionCall") {
                let name = str_at(call, "name").unwrap_or_default().to_string();
                if name.is_empty() {
                    return Err(invalid(&self.provider, "functionCall without a name"));
                }
                let index = self.tool_calls;
                self.tool_calls += 1;
                let id = str_at(call, "id")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(|| {
                        format!("{GENERATED_ID_PREFIX}{:08x}-{index}", self.id_salt)
                    });
                let input = call.get("args").cloned().unwrap_or_else(|| json!({}));
                out.push(StreamEvent::ToolCallStart {
                    index,
                    id: id.clone(),
                    name: name.clone(),
                });
                out.push(StreamEvent::ToolCallDelta {
                    index,
                    id: id.clone(),
                    arguments: input.to_string(),
                });
                out.push(StreamEvent::ToolCallEnd {
                    index,
                    id,
                    name,
                    input,
                    signature: str_at(part, "thoughtSignature").map(str::to_string),
                });
            } else if let Some(text) = str_at(part, "text").filter(|t| !t.is_empty()) {
                if part.get("thought").and_then(Value::as_bool) == Some(true) {
                    out.push(StreamEvent::ReasoningDelta { text: text.into() });
                } else {
                    out.push(StreamEvent::TextDelta { text: text.into() });
                }
            }
        }
        if let Some(reason) = str_at(candidate, "finishReason") {
            let mut reason = finish_reason(reason);
            if reason == StopReason::EndTurn && self.tool_calls > 0 {
                reason = StopReason::ToolUse;
            }
            self.finish = Some(reason);
        }
        Ok(Decoded::Continue)
    }

    fn usage_so_far(&self) -> Option<TokenUsage> {
        self.usage
    }

    fn on_eof(&mut self, out: &mut Vec<StreamEvent>) -> Result<bool, ProviderError> {
        // Gemini has no end marker: the stream is complete when the last
        // candidate carried a finishReason and the connection closed cleanly.
        let Some(reason) = self.finish.clone() else {
            return Ok(false);
        };
        if let Some(usage) = self.usage {
            out.push(StreamEvent::Usage { usage });
        }
        out.push(StreamEvent::Stop { reason });
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ReasoningEffort, ToolDefinition};

    #[test]
    fn body_uses_gemini_roles_function_parts_and_thinking() {
        let mut req = ChatRequest::new(
            "gemini-2.5-flash",
            vec![
                ChatMessage::user("weather?"),
                ChatMessage {
                    role: ChatRole::Assistant,
                    content: vec![ContentPart::ToolCall {
                        id: "gemini-call-1234-0".into(),
                        name: "weather".into(),
                        input: json!({"city": "Paris"}),
                        signature: Some("c2ln".into()),
                    }],
                },
                ChatMessage {
                    role: ChatRole::User,
                    content: vec![ContentPart::ToolResult {
                        call_id: "gemini-call-1234-0".into(),
                        name: "weather".into(),
                        content: "sunny".into(),
                        is_error: false,
                    }],
                },
            ],
        );
        req.system = "be brief".into();
        req.tools = vec![ToolDefinition {
            name: "weather".into(),
            description: "w".into(),
            input_schema: json!({"type": "object"}),
        }];
        req.reasoning_effort = Some(ReasoningEffort::Medium);
        req.max_tokens = Some(1000);
        let body = request_body(&req);
        assert_eq!(body["contents"][1]["role"], "model");
        assert_eq!(
            body["contents"][1]["parts"][0]["functionCall"]["name"],
            "weather"
        );
        assert!(
            body["contents"][1]["parts"][0]["functionCall"]
                .get("id")
                .is_none()
        );
        assert_eq!(body["contents"][1]["parts"][0]["thoughtSignature"], "c2ln");
        assert_eq!(
            body["contents"][2]["parts"][0]["functionResponse"]["response"]["output"],
            "sunny"
        );
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "be brief");
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["name"],
            "weather"
        );
        assert_eq!(
            body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
            8192
        );
        assert_eq!(body["generationConfig"]["maxOutputTokens"], 1000);
    }
}
