//! Per-client-IP rate limits: a token bucket per address, refilled
//! continuously (`per_minute` tokens a minute, bursts up to `per_minute`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Bucket {
    tokens: f64,
    at: Instant,
}

pub struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

impl RateLimiter {
    /// `per_minute == 0`: no limit.
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Take a token for `ip`, or say how long until one is there.
    pub fn check(&self, ip: IpAddr) -> Result<(), Duration> {
        self.check_at(ip, Instant::now())
    }

    pub fn check_at(&self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let cap = f64::from(self.per_minute);
        let rate = cap / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let b = buckets.entry(ip).or_insert(Bucket {
            tokens: cap,
            at: now,
        });
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * rate).min(cap);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / rate))
        }
    }

    /// Drop buckets that are full again (idle clients).
    pub fn forget_idle(&self) {
        if self.per_minute == 0 {
            return;
        }
        let now = Instant::now();
        let cap = f64::from(self.per_minute);
        let rate = cap / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        buckets.retain(|_, b| {
            b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < cap
        });
    }

    pub fn tracked(&self) -> usize {
        self.buckets.lock().map(|b| b.len()).unwrap_or(0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bursts_to_the_limit_then_refills() {
        let l = RateLimiter::new(3);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        let t = Instant::now();
        assert!(l.check_at(ip, t).is_ok());
        assert!(l.check_at(ip, t).is_ok());
        assert!(l.check_at(ip, t).is_ok());
        let wait = l.check_at(ip, t).unwrap_err();
        assert!(
            wait > Duration::from_secs(19) && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        assert!(l.check_at(other, t).is_ok(), "buckets are per address");
        assert!(l.check_at(ip, t + Duration::from_secs(20)).is_ok());
        assert!(l.check_at(ip, t + Duration::from_secs(20)).is_err());
    }

    #[test]
    fn zero_is_unlimited() {
        let l = RateLimiter::new(0);
        let ip: IpAddr = "::1".parse().unwrap();
        for _ in 0..10_000 {
            assert!(l.check(ip).is_ok());
        }
        assert_eq!(l.tracked(), 0);
    }
}
