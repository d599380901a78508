//! Provider-neutral request and event types.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use mia_protocol::TokenUsage;

/// A model reference `{providerID, modelID}` (spec 016). The string form is
/// `provider/model`; the model part may itself contain `/` (OpenRouter ids
/// such as `openrouter/anthropic/claude-sonnet-4`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelRef {
    #[serde(rename = "providerID")]
    pub provider_id: String,
    #[serde(rename = "modelID")]
    pub model_id: String,
}

impl ModelRef {
    pub fn new(provider_id: impl Into<String>, model_id: impl Into<String>) -> Self {
        Self {
            provider_id: provider_id.into(),
            model_id: model_id.into(),
        }
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider_id, self.model_id)
    }
}

/// Why a `provider/model` string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid model reference {input:?}: expected `provider/model`, e.g. `anthropic/claude-sonnet-4-20250514`"
)]
pub struct ModelRefParseError {
    pub input: String,
}

impl FromStr for ModelRef {
    type Err = ModelRefParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ModelRefParseError {
            input: s.to_string(),
        };
        let (provider, model) = s.trim().split_once('/').ok_or_else(err)?;
        if provider.is_empty() || model.is_empty() || provider.contains(char::is_whitespace) {
            return Err(err());
        }
        Ok(Self::new(provider, model))
    }
}

/// Who wrote a message. Tool results travel in `User` messages (as
/// [`ContentPart::ToolResult`]); each client maps them to its wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    User,
    Assistant,
}

/// One unit of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    Text {
        text: String,
    },
    /// Base64 image data.
    Image {
        media_type: String,
        data: String,
    },
    /// Model reasoning from an earlier assistant turn. Anthropic needs the
    /// signature back when thinking is used with tools.
    Reasoning {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider returned encrypted (Anthropic `redacted_thinking`).
    RedactedReasoning {
        data: String,
    },
    ToolCall {
        id: String,
        name: String,
        input: Value,
        /// Opaque provider data that must be sent back with the call
        /// (Gemini `thoughtSignature`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    ToolResult {
        call_id: String,
        /// Name of the tool that was called (Gemini needs it).
        name: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
}

impl ContentPart {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: Vec<ContentPart>,
}

impl ChatMessage {
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: ChatRole::User,
            content: vec![ContentPart::text(text)],
        }
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: ChatRole::Assistant,
            content: vec![ContentPart::text(text)],
        }
    }
}

/// A tool the model may call; `input_schema` is a JSON Schema object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    /// Thinking-token budget used for providers that take a budget
    /// (Anthropic extended thinking, Gemini `thinkingBudget`).
    pub fn budget_tokens(self) -> u32 {
        match self {
            Self::Low => 2_048,
            Self::Medium => 8_192,
            Self::High => 24_576,
        }
    }
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Provider-specific model id (`claude-sonnet-4-20250514`, `gpt-4.1`, ...).
    pub model: String,
    #[serde(default)]
    pub system: String,
    pub messages: Vec<ChatMessage>,
    #[serde(default)]
    pub tools: Vec<ToolDefinition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Output token limit; when absent the client uses the catalog's
    /// max output for the model, else 8192.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
}

impl ChatRequest {
    pub fn new(model: impl Into<String>, messages: Vec<ChatMessage>) -> Self {
        Self {
            model: model.into(),
            system: String::new(),
            messages,
            tools: Vec::new(),
            temperature: None,
            max_tokens: None,
            reasoning_effort: None,
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    ContentFilter,
    Other(String),
}

impl StopReason {
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::ContentFilter => "content_filter",
            Self::Other(s) => s,
        }
    }
}

/// A typed event streamed back from a provider. A successful stream ends
/// with `Usage` (when the provider reports it) and then `Stop`; a failed one
/// ends with an `Err(ProviderError)` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    /// Signature closing a reasoning block (Anthropic `signature_delta`).
    ReasoningSignature {
        signature: String,
    },
    RedactedReasoning {
        data: String,
    },
    /// A tool call begins. `index` orders calls within one response.
    ToolCallStart {
        index: u32,
        id: String,
        name: String,
    },
    /// A fragment of the call's JSON arguments, in order.
    ToolCallDelta {
        index: u32,
        id: String,
        arguments: String,
    },
    /// The call is complete; `input` is the parsed argument object.
    ToolCallEnd {
        index: u32,
        id: String,
        name: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    Usage {
        usage: TokenUsage,
    },
    /// The client is about to retry after a retryable failure that happened
    /// before any content arrived.
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    Stop {
        reason: StopReason,
    },
}

impl StreamEvent {
    /// Whether this event is model output (counts as "content has arrived").
    pub fn is_content(&self) -> bool {
        matches!(
            self,
            Self::TextDelta { .. }
                | Self::ReasoningDelta { .. }
                | Self::ReasoningSignature { .. }
                | Self::RedactedReasoning { .. }
                | Self::ToolCallStart { .. }
                | Self::ToolCallDelta { .. }
                | Self::ToolCallEnd { .. }
        )
    }
}

/// A finished tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// Everything one response produced, accumulated from its events. On a
/// failed stream this is the partial output received before the failure.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    pub reasoning: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_signature: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    /// Tool calls whose arguments had started streaming but never finished
    /// (only on a cut stream). They must not be executed.
    #[serde(default)]
    pub incomplete_tool_calls: Vec<String>,
    pub usage: Option<TokenUsage>,
    pub stop: Option<StopReason>,
    pub retries: u32,
}

impl Completion {
    pub fn apply(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta { text } => self.text.push_str(text),
            StreamEvent::ReasoningDelta { text } => self.reasoning.push_str(text),
            StreamEvent::ReasoningSignature { signature } => {
                self.reasoning_signature = Some(signature.clone());
            }
            StreamEvent::RedactedReasoning { .. } => {}
            StreamEvent::ToolCallStart { id, .. } => self.incomplete_tool_calls.push(id.clone()),
            StreamEvent::ToolCallDelta { .. } => {}
            StreamEvent::ToolCallEnd {
                id,
                name,
                input,
                signature,
                ..
            } => {
                self.incomplete_tool_calls.retain(|pending| pending != id);
                self.tool_calls.push(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    signature: signature.clone(),
                });
            }
            StreamEvent::Usage { usage } => self.usage = Some(*usage),
            StreamEvent::Retrying { .. } => self.retries += 1,
            StreamEvent::Stop { reason } => self.stop = Some(reason.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ref_parses_and_prints() {
        let r: ModelRef = "anthropic/claude-sonnet-4-20250514".parse().unwrap();
        assert_eq!(r.provider_id, "anthropic");
        assert_eq!(r.model_id, "claude-sonnet-4-20250514");
        assert_eq!(r.to_string(), "anthropic/claude-sonnet-4-20250514");
        let nested: ModelRef = "openrouter/anthropic/claude-sonnet-4".parse().unwrap();
        assert_eq!(nested.provider_id, "openrouter");
        assert_eq!(nested.model_id, "anthropic/claude-sonnet-4");
        for bad in ["", "anthropic", "/x", "anthropic/", "a b/c"] {
            assert!(bad.parse::<ModelRef>().is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn model_ref_json_uses_spec_field_names() {
        let r = ModelRef::new("google", "gemini-2.5-flash");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"providerID": "google", "modelID": "gemini-2.5-flash"})
        );
    }

    #[test]
    fn completion_tracks_incomplete_tool_calls() {
        let mut c = Completion::default();
        c.apply(&StreamEvent::ToolCallStart {
            index: 0,
            id: "a".into(),
            name: "read".into(),
        });
        c.apply(&StreamEvent::ToolCallStart {
            index: 1,
            id: "b".into(),
            name: "read".into(),
        });
        c.apply(&StreamEvent::ToolCallEnd {
            index: 0,
            id: "a".into(),
            name: "read".into(),
            input: serde_json::json!({}),
            signature: None,
        });
        assert_eq!(c.tool_calls.len(), 1);
        assert_eq!(c.incomplete_tool_calls, vec!["b".to_string()]);
    }
}
