//! Timeouts and the retry schedule. Every number is a field so tests can
//! scale the whole schedule down and drive each rule in milliseconds.

use std::time::Duration;

use crate::error::ProviderError;

/// Connection and stream timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Opening the connection (TCP + TLS). Default 10 s.
    pub connect: Duration,
    /// Longest silence while waiting for response headers or between two
    /// reads of the stream. Default 90 s.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(90),
        }
    }
}

/// How failed requests are retried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 4, so at most 5 attempts).
    pub max_retries: u32,
    /// Base of the exponential backoff for server and network errors
    /// (default 0.5 s · 2ⁿ ...).
    pub base: Duration,
    /// ... capped at this (default 8 s).
    pub cap: Duration,
    /// Base for rate-limit (429) and overload (529) errors (default 1 s · 2ⁿ ...).
    pub slow_base: Duration,
    /// ... capped at this (default 30 s).
    pub slow_cap: Duration,
    /// The longest server-requested wait (`retry-after-ms`/`retry-after`)
    /// that is honoured (default 60 s). A longer (or absent) one falls back
    /// to the exponential backoff, as the official SDKs do; if the retries
    /// run out, the final [`ProviderError::RateLimited`] still carries the
    /// server's wait so the user can be told when to try again.
    pub max_retry_after: Duration,
    /// Random reduction of each backoff, 0.0..=1.0 (default 0.25: a wait is
    /// 75–100 % of its nominal value).
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base: Duration::from_millis(500),
            cap: Duration::from_secs(8),
            slow_base: Duration::from_secs(1),
            slow_cap: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            jitter: 0.25,
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryDecision {
    Retry(Duration),
    GiveUp,
}

impl RetryPolicy {
    /// Same schedule with every duration multiplied by `factor` (tests).
    pub fn scaled(mut self, factor: f64) -> Self {
        let s = |d: Duration| d.mul_f64(factor);
        self.base = s(self.base);
        self.cap = s(self.cap);
        self.slow_base = s(self.slow_base);
        self.slow_cap = s(self.slow_cap);
        self.max_retry_after = s(self.max_retry_after);
        self
    }

    /// Nominal (jitter-free) backoff before retry number `retry` (0-based).
    pub fn nominal_backoff(&self, error: &ProviderError, retry: u32) -> Duration {
        let (base, cap) = if error.uses_slow_backoff() {
            (self.slow_base, self.slow_cap)
        } else {
            (self.base, self.cap)
        };
        let factor = 2u32.saturating_pow(retry.min(20));
        base.saturating_mul(factor).min(cap)
    }

    /// Decide whether to retry after `error`, `retries_done` retries so far.
    /// `server_wait` is the response's `retry-after-ms`/`retry-after` (used
    /// for any retryable status, not only 429). Server waits are multiplied
    /// by `time_scale` so a scaled policy also scales them.
    pub fn decide(
        &self,
        error: &ProviderError,
        retries_done: u32,
        server_wait: Option<Duration>,
        time_scale: f64,
    ) -> RetryDecision {
        if !error.is_retryable() || retries_done >= self.max_retries {
            return RetryDecision::GiveUp;
        }
        if let Some(wait) = error.retry_after().or(server_wait) {
            let wait = wait.mul_f64(time_scale);
            if wait <= self.max_retry_after {
                return RetryDecision::Retry(wait);
            }
        }
        let nominal = self.nominal_backoff(error, retries_done);
        let jitter = self.jitter.clamp(0.0, 1.0);
        let reduce: f64 = if jitter > 0.0 {
            rand::random::<f64>() * jitter
        } else {
            0.0
        };
        RetryDecision::Retry(nominal.mul_f64(1.0 - reduce))
    }
}

/// Parse `retry-after-ms` (milliseconds, OpenAI) or `retry-after` (seconds
/// or an HTTP date, RFC 9110) headers.
pub fn parse_retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Some(Duration::from_secs_f64(secs));
        }
        return None;
    }
    // An HTTP date (RFC 9110's IMF-fixdate and its obsolete forms).
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn server_err() -> ProviderError {
        ProviderError::Server {
            provider: "p".into(),
            status: 500,
            message: String::new(),
        }
    }

    fn rate_limited(after: Option<Duration>) -> ProviderError {
        ProviderError::RateLimited {
            provider: "p".into(),
            retry_after: after,
            message: String::new(),
        }
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RetryPolicy::default();
        let s = server_err();
        let got: Vec<_> = (0..6)
            .map(|n| p.nominal_backoff(&s, n).as_millis())
            .collect();
        assert_eq!(got, vec![500, 1000, 2000, 4000, 8000, 8000]);
        let r = rate_limited(None);
        let got: Vec<_> = (0..7)
            .map(|n| p.nominal_backoff(&r, n).as_millis())
            .collect();
        assert_eq!(got, vec![1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    }

    #[test]
    fn jitter_stays_within_bounds() {
        let p = RetryPolicy::default();
        for _ in 0..200 {
            match p.decide(&server_err(), 2, None, 1.0) {
                RetryDecision::Retry(d) => {
                    assert!(d <= Duration::from_secs(2) && d >= Duration::from_millis(1500))
                }
                RetryDecision::GiveUp => panic!("should retry"),
            }
        }
    }

    #[test]
    fn gives_up_after_max_retries_and_backs_off_on_long_retry_after() {
        let p = RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        };
        assert_eq!(p.decide(&server_err(), 4, None, 1.0), RetryDecision::GiveUp);
        assert_eq!(
            p.decide(&rate_limited(Some(Duration::from_secs(61))), 1, None, 1.0),
            RetryDecision::Retry(Duration::from_secs(2)),
            "over 60 s: exponential backoff instead"
        );
        assert_eq!(
            p.decide(&rate_limited(Some(Duration::from_secs(60))), 0, None, 1.0),
            RetryDecision::Retry(Duration::from_secs(60))
        );
        assert_eq!(
            p.decide(&server_err(), 0, Some(Duration::from_secs(3)), 1.0),
            RetryDecision::Retry(Duration::from_secs(3)),
            "a 5xx retry-after is honoured too"
        );
    }

    #[test]
    fn parses_retry_after_headers() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(7)));
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(1500)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(parse_retry_after(&h), Some(Duration::ZERO), "past date");
        let later = std::time::SystemTime::now() + Duration::from_secs(120);
        h.insert(
            "retry-after",
            HeaderValue::from_str(&httpdate::fmt_http_date(later)).unwrap(),
        );
        let wait = parse_retry_after(&h).unwrap();
        assert!(
            wait > Duration::from_secs(110) && wait <= Duration::from_secs(120),
            "{wait:?}"
        );
        h.insert("retry-after", HeaderValue::from_static("not a date"));
        assert_eq!(parse_retry_after(&h), None);
    }
}
