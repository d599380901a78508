//! Helpers shared by the wire formats.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::client::snippet;
use crate::error::{HttpFailure, ProviderError};
use crate::retry::parse_retry_after;

/// The interesting fields of a provider error object.
#[derive(Debug, Default)]
pub(crate) struct ErrorInfo {
    pub message: String,
    /// Lower-cased `type`, `code` and `status` strings.
    pub codes: Vec<String>,
    /// Gemini `RetryInfo.retryDelay`.
    pub retry_delay: Option<Duration>,
}

/// Read `{"error": {...}}` (Anthropic, OpenAI, Gemini; Gemini sometimes wraps
/// it in an array) or a bare error object.
pub(crate) fn error_info(value: &Value) -> ErrorInfo {
    let root = match value {
        Value::Array(items) => items.first().unwrap_or(value),
        _ => value,
    };
    let err = root.get("error").unwrap_or(root);
    let mut info = ErrorInfo {
        message: err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| err.as_str().map(str::to_string))
            .unwrap_or_default(),
        ..ErrorInfo::default()
    };
    for key in ["type", "code", "status"] {
        match err.get(key) {
            Some(Value::String(s)) => info.codes.push(s.to_ascii_lowercase()),
            Some(Value::Number(n)) => info.codes.push(n.to_string()),
            _ => {}
        }
    }
    if let Some(details) = err.get("details").and_then(Value::as_array) {
        for d in details {
            if let Some(delay) = d.get("retryDelay").and_then(Value::as_str) {
                info.retry_delay = parse_google_duration(delay);
            }
            if let Some(violations) = d.get("violations").and_then(Value::as_array) {
                for v in violations {
                    let id = v.get("quotaId").and_then(Value::as_str).unwrap_or_default();
                    if id.contains("PerDay") {
                        info.codes.push("insufficient_quota".into());
                    }
                }
            }
        }
    }
    info
}

/// `"30s"`, `"1.5s"` → duration.
fn parse_google_duration(s: &str) -> Option<Duration> {
    let secs: f64 = s.strip_suffix('s')?.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// Classify a non-2xx HTTP response.
pub(crate) fn classify_http(
    provider: &str,
    status: u16,
    headers: &HeaderMap,
    body: &str,
) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let info = parsed.as_ref().map(error_info).unwrap_or_default();
    let message = if info.message.is_empty() {
        snippet(body)
    } else {
        info.message.clone()
    };
    HttpFailure {
        provider,
        status,
        retry_after: parse_retry_after(headers).or(info.retry_delay),
        message,
        codes: info.codes,
    }
    .classify()
}

pub(crate) fn invalid(provider: &str, what: impl std::fmt::Display) -> ProviderError {
    ProviderError::InvalidResponse {
        provider: provider.to_string(),
        message: what.to_string(),
    }
}

/// Parse an SSE data payload as JSON.
pub(crate) fn parse_json(provider: &str, data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        invalid(
            provider,
            format_args!("malformed JSON in stream event ({e}): {}", snippet(data)),
        )
    })
}

/// Parse accumulated tool-call arguments; empty means `{}`.
pub(crate) fn parse_arguments(
    provider: &str,
    name: &str,
    args: &str,
) -> Result<Value, ProviderError> {
    if args.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(args).map_err(|e| {
        invalid(
            provider,
            format_args!(
                "the arguments of tool call `{name}` are not valid JSON ({e}): {}",
                snippet(args)
            ),
        )
    })
}

pub(crate) fn u64_at(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

pub(crate) fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Join a base URL and a path with exactly one `/`.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_gemini_quota_and_retry_delay() {
        let body = serde_json::json!([{"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}
        ]}}]);
        let info = error_info(&body);
        assert_eq!(info.retry_delay, Some(Duration::from_secs(17)));
        assert!(info.codes.contains(&"resource_exhausted".to_string()));
        assert!(!info.codes.contains(&"insufficient_quota".to_string()));
        let e = classify_http("google", 429, &HeaderMap::new(), &body.to_string());
        assert_eq!(e.kind(), "rate_limited");
        assert_eq!(e.retry_after(), Some(Duration::from_secs(17)));

        let daily = serde_json::json!({"error": {"code": 429, "message": "exhausted", "status": "RESOURCE_EXHAUSTED",
            "details": [{"violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}});
        let e = classify_http("google", 429, &HeaderMap::new(), &daily.to_string());
        assert_eq!(e.kind(), "quota");

        // Per-minute limit: the message talks about quota and billing, but
        // RetryInfo says when to retry, so it is a rate limit.
        let per_minute = serde_json::json!({"error": {"code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "23s"}
        ]}});
        let e = classify_http("google", 429, &HeaderMap::new(), &per_minute.to_string());
        assert_eq!(e.kind(), "rate_limited");
        assert_eq!(e.retry_after(), Some(Duration::from_secs(23)));
    }

    #[test]
    fn non_json_error_bodies_are_shown() {
        let e = classify_http("openai", 502, &HeaderMap::new(), "<html>Bad Gateway</html>");
        assert_eq!(e.kind(), "server");
        assert!(e.to_string().contains("Bad Gateway"));
    }

    #[test]
    fn joins_urls() {
        assert_eq!(join_url("http://x/v1/", "/chat"), "http://x/v1/chat");
        assert_eq!(join_url("http://x", "v1/messages"), "http://x/v1/messages");
    }
}
