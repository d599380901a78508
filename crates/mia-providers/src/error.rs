//! The provider error taxonomy.

use std::time::Duration;

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP/TLS connection.
    Connect,
    /// Waiting for response headers or for the next bytes of the stream.
    Idle,
}

impl TimeoutPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Idle => "idle",
        }
    }
}

/// Everything a provider call can fail with. Each variant says what went
/// wrong and what the user can do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    #[error(
        "{provider} rejected the credentials ({status}): {message}. Check the API key (environment variable, `mia-code auth set {provider}`, or the `providers` config)"
    )]
    Auth {
        provider: String,
        status: u16,
        message: String,
    },

    #[error("{provider} is rate limiting requests{}: {message}. Wait and try again, or lower the request rate", retry_after_text(*retry_after))]
    RateLimited {
        provider: String,
        retry_after: Option<Duration>,
        message: String,
    },

    #[error(
        "{provider} quota or spend limit reached: {message}. Check the account's billing and usage limits; retrying will not help"
    )]
    QuotaExceeded { provider: String, message: String },

    #[error(
        "{provider} is overloaded: {message}. Try again in a few minutes or switch to another model"
    )]
    Overloaded { provider: String, message: String },

    #[error(
        "the conversation is too long for the model's context window ({provider}): {message}. Compact the session or pick a model with a larger window"
    )]
    ContextTooLong { provider: String, message: String },

    #[error(
        "{provider} refused the request ({status}): {message}. This is a bug in the request or an unsupported option for this model; retrying will not help"
    )]
    BadRequest {
        provider: String,
        status: u16,
        message: String,
    },

    #[error(
        "{provider} server error ({status}): {message}. The provider is having trouble; try again later"
    )]
    Server {
        provider: String,
        status: u16,
        message: String,
    },

    #[error(
        "network error talking to {provider}: {message}. Check the connection, proxy and base URL"
    )]
    Network { provider: String, message: String },

    #[error(
        "{provider} {} timeout after {}s. Check the connection or the base URL; the provider may be stalled", phase.as_str(), after.as_secs_f64()
    )]
    Timeout {
        provider: String,
        phase: TimeoutPhase,
        after: Duration,
    },

    #[error(
        "{provider} sent a response that could not be read: {message}. This may be a provider incident or an incompatible OpenAI-compatible server"
    )]
    InvalidResponse { provider: String, message: String },

    /// The stream broke after model output had arrived. The output received
    /// so far was delivered; the request was not retried (a partially
    /// streamed tool call is never re-run behind the user's back).
    #[error("the response from {provider} was cut off after partial output: {cause}")]
    Interrupted {
        provider: String,
        cause: Box<ProviderError>,
    },

    #[error("the request was cancelled")]
    Cancelled,

    #[error("{provider} is not configured: {message}")]
    Config { provider: String, message: String },
}

fn retry_after_text(d: Option<Duration>) -> String {
    match d {
        Some(d) => format!(" (retry after {}s)", d.as_secs_f64()),
        None => String::new(),
    }
}

impl ProviderError {
    /// A short machine-readable class, stored in error parts.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Auth { .. } => "auth",
            Self::RateLimited { .. } => "rate_limited",
            Self::QuotaExceeded { .. } => "quota",
            Self::Overloaded { .. } => "overloaded",
            Self::ContextTooLong { .. } => "context_too_long",
            Self::BadRequest { .. } => "bad_request",
            Self::Server { .. } => "server",
            Self::Network { .. } => "network",
            Self::Timeout { .. } => "timeout",
            Self::InvalidResponse { .. } => "invalid_response",
            Self::Interrupted { .. } => "interrupted",
            Self::Cancelled => "cancelled",
            Self::Config { .. } => "config",
        }
    }

    /// Whether the request may be sent again (before any content arrived).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::RateLimited { .. }
            | Self::Overloaded { .. }
            | Self::Server { .. }
            | Self::Network { .. }
            | Self::Timeout { .. }
            | Self::InvalidResponse { .. } => true,
            Self::Auth { .. }
            | Self::QuotaExceeded { .. }
            | Self::ContextTooLong { .. }
            | Self::BadRequest { .. }
            | Self::Interrupted { .. }
            | Self::Cancelled
            | Self::Config { .. } => false,
        }
    }

    /// Whether this retryable error uses the slow (rate-limit) backoff.
    pub(crate) fn uses_slow_backoff(&self) -> bool {
        matches!(self, Self::RateLimited { .. } | Self::Overloaded { .. })
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// Classify a provider's HTTP error response. `error_type`/`code` are the
/// provider's machine-readable error fields when the body had them.
pub(crate) struct HttpFailure<'a> {
    pub provider: &'a str,
    pub status: u16,
    pub retry_after: Option<Duration>,
    pub message: String,
    /// Lower-cased provider error type/code/status strings.
    pub codes: Vec<String>,
}

pub(crate) fn looks_like_context_overflow(message: &str, codes: &[String]) -> bool {
    let m = message.to_ascii_lowercase();
    codes
        .iter()
        .any(|c| c == "context_length_exceeded" || c == "string_above_max_length")
        || m.contains("prompt is too long")
        || m.contains("context length")
        || m.contains("context window")
        || m.contains("maximum context")
        || m.contains("too many tokens")
        || (m.contains("input token count") && m.contains("exceeds"))
}

fn looks_like_quota(message: &str, codes: &[String]) -> bool {
    let m = message.to_ascii_lowercase();
    codes
        .iter()
        .any(|c| c == "insufficient_quota" || c == "billing_hard_limit_reached")
        || m.contains("credit balance")
        || m.contains("billing")
        || m.contains("spend limit")
        || m.contains("per day")
        || m.contains("perday")
}

impl HttpFailure<'_> {
    pub(crate) fn classify(self) -> ProviderError {
        let provider = self.provider.to_string();
        let message = self.message;
        if looks_like_context_overflow(&message, &self.codes)
            && matches!(self.status, 400 | 413 | 422)
        {
            return ProviderError::ContextTooLong { provider, message };
        }
        match self.status {
            401 | 403 => ProviderError::Auth {
                provider,
                status: self.status,
                message,
            },
            // An explicit quota code wins; a server that says when to retry
            // is rate limiting (Gemini's per-minute 429s mention "quota" and
            // "billing" too); otherwise the message decides.
            429 if self.codes.iter().any(|c| c == "insufficient_quota")
                || (self.retry_after.is_none() && looks_like_quota(&message, &self.codes)) =>
            {
                ProviderError::QuotaExceeded { provider, message }
            }
            429 => ProviderError::RateLimited {
                provider,
                retry_after: self.retry_after,
                message,
            },
            529 => ProviderError::Overloaded { provider, message },
            408 | 409 => ProviderError::Network {
                provider,
                message: format!("HTTP {}: {message}", self.status),
            },
            500..=599 => ProviderError::Server {
                provider,
                status: self.status,
                message,
            },
            400 if looks_like_quota(&message, &self.codes) => {
                ProviderError::QuotaExceeded { provider, message }
            }
            _ => ProviderError::BadRequest {
                provider,
                status: self.status,
                message,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(status: u16, message: &str, codes: &[&str]) -> ProviderError {
        HttpFailure {
            provider: "p",
            status,
            retry_after: None,
            message: message.into(),
            codes: codes.iter().map(|s| s.to_string()).collect(),
        }
        .classify()
    }

    #[test]
    fn statuses_map_to_the_taxonomy() {
        let table: &[(u16, &str, &[&str], &str, bool)] = &[
            (400, "bad field", &[], "bad_request", false),
            (401, "invalid x-api-key", &[], "auth", false),
            (403, "forbidden", &[], "auth", false),
            (404, "model not found", &[], "bad_request", false),
            (413, "request too large", &[], "bad_request", false),
            (422, "unprocessable", &[], "bad_request", false),
            (408, "timeout", &[], "network", true),
            (409, "conflict", &[], "network", true),
            (429, "slow down", &[], "rate_limited", true),
            (429, "quota", &["insufficient_quota"], "quota", false),
            (500, "oops", &[], "server", true),
            (502, "bad gateway", &[], "server", true),
            (503, "unavailable", &[], "server", true),
            (529, "Overloaded", &[], "overloaded", true),
            (
                400,
                "prompt is too long: 210000 tokens > 200000 maximum",
                &[],
                "context_too_long",
                false,
            ),
            (
                400,
                "too long",
                &["context_length_exceeded"],
                "context_too_long",
                false,
            ),
            (
                400,
                "Your credit balance is too low to access the Anthropic API",
                &[],
                "quota",
                false,
            ),
        ];
        for (status, msg, codes, kind, retry) in table {
            let e = classify(*status, msg, codes);
            assert_eq!(e.kind(), *kind, "{status} {msg}");
            assert_eq!(e.is_retryable(), *retry, "{status} {msg}");
        }
    }

    #[test]
    fn messages_tell_the_user_what_to_do() {
        let e = classify(401, "invalid x-api-key", &[]);
        let text = e.to_string();
        assert!(text.contains("mia-code auth set p"), "{text}");
        let e = ProviderError::RateLimited {
            provider: "openai".into(),
            retry_after: Some(Duration::from_secs(3)),
            message: "slow".into(),
        };
        assert!(e.to_string().contains("retry after 3s"), "{e}");
    }
}
