//! A per-session token bucket for `--rate-limit N/s` (off by default).
//!
//! Each session starts with a full bucket of `burst` tokens (one second's
//! worth, at least one), refilled continuously at N tokens a second; every
//! request takes one. A request that finds the bucket empty is answered with
//! error -32000 "rate limit exceeded; retry after M ms" and
//! `data.retryAfterMs`, and is not handled. When the limit is on, the server
//! advertises it as `capabilities.experimental["mcp-conform/rateLimit"] =
//! {"requestsPerSecond": N, "burst": B}` (see [`RateSpec::advertised`]).

use std::str::FromStr;
use std::time::Instant;

/// Requests allowed per second; the bucket holds one second's worth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSpec {
    pub per_sec: f64,
}

/// The experimental capability key under which the limit is advertised.
pub const CAPABILITY: &str = "mcp-conform/rateLimit";

impl RateSpec {
    /// Tokens a full bucket holds.
    fn capacity(self) -> f64 {
        self.per_sec.max(1.0)
    }

    /// Requests a fresh (or fully rested) session may send at once.
    pub fn burst(self) -> u64 {
        self.capacity().floor() as u64
    }

    /// The value of `capabilities.experimental["mcp-conform/rateLimit"]`.
    pub fn advertised(self) -> serde_json::Value {
        serde_json::json!({"requestsPerSecond": self.per_sec, "burst": self.burst()})
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid rate limit {0:?}: expected N/s with N > 0, e.g. 50/s")]
pub struct BadRate(pub String);

impl FromStr for RateSpec {
    type Err = BadRate;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let number = s.trim().strip_suffix("/s").unwrap_or(s.trim());
        match number.trim().parse::<f64>() {
            Ok(n) if n.is_finite() && n > 0.0 => Ok(RateSpec { per_sec: n }),
            _ => Err(BadRate(s.to_string())),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TokenBucket {
    spec: RateSpec,
    tokens: f64,
    last: Instant,
    /// Cleared by the `rate-limit-no-recovery` fault: a spent bucket stays spent.
    refills: bool,
}

impl TokenBucket {
    pub fn new(spec: RateSpec) -> Self {
        TokenBucket {
            spec,
            tokens: spec.capacity(),
            last: Instant::now(),
            refills: true,
        }
    }

    /// The `rate-limit-no-recovery` fault: tokens are never given back.
    pub fn without_refill(mut self) -> Self {
        self.refills = false;
        self
    }

    /// Takes one token, or says how many milliseconds until one is available.
    pub fn take(&mut self) -> Result<(), u64> {
        self.take_at(Instant::now())
    }

    fn take_at(&mut self, now: Instant) -> Result<(), u64> {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        if self.refills {
            self.tokens = (self.tokens + elapsed * self.spec.per_sec).min(self.spec.capacity());
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - self.tokens) / self.spec.per_sec;
            Err((wait * 1000.0).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn parses() {
        assert_eq!("5/s".parse::<RateSpec>(), Ok(RateSpec { per_sec: 5.0 }));
        assert_eq!("2".parse::<RateSpec>(), Ok(RateSpec { per_sec: 2.0 }));
        assert!("0/s".parse::<RateSpec>().is_err());
        assert!("x".parse::<RateSpec>().is_err());
    }

    #[test]
    fn limits_and_refills() {
        let mut b = TokenBucket::new(RateSpec { per_sec: 2.0 });
        let t0 = b.last;
        assert!(b.take_at(t0).is_ok());
        assert!(b.take_at(t0).is_ok());
        let wait = b.take_at(t0).expect_err("empty");
        assert!((1..=500).contains(&wait), "{wait}");
        assert!(b.take_at(t0 + Duration::from_millis(600)).is_ok());
    }

    #[test]
    fn advertises_rate_and_burst() {
        let spec: RateSpec = "2.5/s".parse().expect("valid");
        assert_eq!(spec.burst(), 2);
        assert_eq!(
            spec.advertised(),
            serde_json::json!({"requestsPerSecond": 2.5, "burst": 2})
        );
        assert_eq!(RateSpec { per_sec: 0.5 }.burst(), 1);
    }

    #[test]
    fn a_bucket_without_refill_stays_empty() {
        let mut b = TokenBucket::new(RateSpec { per_sec: 1.0 }).without_refill();
        let t0 = b.last;
        assert!(b.take_at(t0).is_ok());
        assert!(b.take_at(t0 + Duration::from_secs(60)).is_err());
    }
}
