//! Model clients for mia-code.
//!
//! One [`Provider`] trait streams typed [`StreamEvent`]s for a
//! [`ChatRequest`]. Three wire formats are implemented over one shared,
//! cancellable request loop (timeouts, retries, partial output on a cut
//! stream): Anthropic Messages, OpenAI Chat Completions (also any
//! OpenAI-compatible server) and Google Gemini. See the crate README for the
//! rules and the design choices.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mia_providers::{ChatMessage, ChatRequest, ProviderConfig, build_provider, collect};
//! use tokio_util::sync::CancellationToken;
//!
//! let provider = build_provider(ProviderConfig::new("anthropic").with_api_key("sk-..."))?;
//! let request = ChatRequest::new("claude-sonnet-4-20250514", vec![ChatMessage::user("hi")]);
//! let completion = collect(provider.stream(request, CancellationToken::new())).await?;
//! println!("{}", completion.text);
//! # Ok(()) }
//! ```

pub mod anthropic;
pub mod catalog;
mod client;
pub mod convert;
pub mod credentials;
mod error;
pub mod gemini;
pub mod openai;
mod retry;
pub mod settings;
pub mod sse;
mod types;
mod wire_common;

use std::sync::Arc;

pub use catalog::{Catalog, ModelInfo, Prices};
pub use client::{ClientOptions, EventStream, Provider, StreamFailure, collect};
pub use error::{ProviderError, TimeoutPhase};
pub use openai::MaxTokensField;
pub use retry::{RetryDecision, RetryPolicy, Timeouts, parse_retry_after};
pub use tokio_util::sync::CancellationToken;
pub use types::{
    ChatMessage, ChatRequest, ChatRole, Completion, ContentPart, ModelRef, ModelRefParseError,
    ReasoningEffort, StopReason, StreamEvent, TokenUsage, ToolCall, ToolDefinition,
};

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    /// OpenAI Chat Completions or any compatible server.
    OpenAi,
    Google,
}

impl ProviderKind {
    /// The wire format for a provider id: `anthropic` and `google`
    /// (`gemini`) are their own; every other id (`openai`, `local`,
    /// `openrouter`, ...) is OpenAI-compatible.
    pub fn for_provider_id(id: &str) -> Self {
        match id {
            "anthropic" => Self::Anthropic,
            "google" | "gemini" => Self::Google,
            _ => Self::OpenAi,
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "anthropic" => Some(Self::Anthropic),
            "openai" | "openai-compatible" => Some(Self::OpenAi),
            "google" | "gemini" => Some(Self::Google),
            _ => None,
        }
    }
}

/// Default base URL for well-known provider ids.
pub fn default_base_url(provider_id: &str) -> Option<&'static str> {
    match provider_id {
        "anthropic" => Some(anthropic::DEFAULT_BASE_URL),
        "openai" => Some(openai::DEFAULT_BASE_URL),
        "google" | "gemini" => Some(gemini::DEFAULT_BASE_URL),
        // Ollama's OpenAI-compatible endpoint; LM Studio users set
        // `http://localhost:1234/v1`.
        "local" => Some("http://localhost:11434/v1"),
        "openrouter" => Some("https://openrouter.ai/api/v1"),
        _ => None,
    }
}

/// Everything needed to build one client; plain values so callers can fill
/// it from any config source.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The provider id models refer to (`anthropic`, `local`, ...).
    pub id: String,
    pub kind: ProviderKind,
    /// `None` uses [`default_base_url`].
    pub base_url: Option<String>,
    /// `None` sends no credentials (fine for local servers).
    pub api_key: Option<String>,
    pub extra_headers: Vec<(String, String)>,
    /// Anthropic only: cache breakpoints on the system prompt and the
    /// conversation prefix (default on).
    pub prompt_caching: bool,
    /// OpenAI-compatible only. Default: `max_completion_tokens` for the
    /// `openai` id, `max_tokens` for everything else.
    pub max_tokens_field: Option<MaxTokensField>,
    pub options: ClientOptions,
}

impl ProviderConfig {
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        Self {
            kind: ProviderKind::for_provider_id(&id),
            id,
            base_url: None,
            api_key: None,
            extra_headers: Vec::new(),
            prompt_caching: true,
            max_tokens_field: None,
            options: ClientOptions::default(),
        }
    }

    pub fn with_kind(mut self, kind: ProviderKind) -> Self {
        self.kind = kind;
        self
    }

    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    pub fn with_options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }
}

/// Build a client for `config`.
pub fn build_provider(config: ProviderConfig) -> Result<Arc<dyn Provider>, ProviderError> {
    let base_url = match config.base_url.clone() {
        Some(url) => url,
        None => default_base_url(&config.id)
            .ok_or_else(|| ProviderError::Config {
                provider: config.id.clone(),
                message:
                    "no base URL is known for this provider; set `baseURL` in its `providers` entry"
                        .into(),
            })?
            .to_string(),
    };
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(ProviderError::Config {
            provider: config.id.clone(),
            message: format!("base URL {base_url:?} must start with http:// or https://"),
        });
    }
    let provider: Arc<dyn Provider> = match config.kind {
        ProviderKind::Anthropic => Arc::new(client::HttpProvider::new(
            config.id.clone(),
            anthropic::AnthropicWire {
                provider: config.id,
                base_url,
                api_key: config.api_key,
                extra_headers: config.extra_headers,
                prompt_caching: config.prompt_caching,
            },
            config.options,
        )?),
        ProviderKind::OpenAi => {
            let field = config.max_tokens_field.unwrap_or(if config.id == "openai" {
                MaxTokensField::MaxCompletionTokens
            } else {
                MaxTokensField::MaxTokens
            });
            Arc::new(client::HttpProvider::new(
                config.id.clone(),
                openai::OpenAiWire {
                    provider: config.id,
                    base_url,
                    api_key: config.api_key,
                    extra_headers: config.extra_headers,
                    max_tokens_field: field,
                },
                config.options,
            )?)
        }
        ProviderKind::Google => Arc::new(client::HttpProvider::new(
            config.id.clone(),
            gemini::GeminiWire {
                provider: config.id,
                base_url,
                api_key: config.api_key,
                extra_headers: config.extra_headers,
            },
            config.options,
        )?),
    };
    Ok(provider)
}

/// Decode a complete SSE body with a provider's decoder, without HTTP.
/// Used by the conformance tests and the benchmark's parse-only baseline.
pub fn decode_sse_body(kind: ProviderKind, body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    use client::Decoder;
    let mut decoder: Box<dyn Decoder> = match kind {
        ProviderKind::Anthropic => Box::new(anthropic::AnthropicDecoder::new("anthropic".into())),
        ProviderKind::OpenAi => Box::new(openai::OpenAiDecoder::new("openai".into())),
        ProviderKind::Google => Box::new(gemini::GeminiDecoder::new("google".into())),
    };
    let mut parser = sse::SseParser::new();
    let mut events = Vec::new();
    parser.feed(body, &mut events);
    let mut out = Vec::new();
    for e in &events {
        if let client::Decoded::Done = decoder.on_event(e, &mut out)? {
            return Ok(out);
        }
    }
    if parser.has_partial() || !decoder.on_eof(&mut out)? {
        return Err(ProviderError::Network {
            provider: format!("{kind:?}").to_lowercase(),
            message: "the stream ended before the response was complete".into(),
        });
    }
    Ok(out)
}
