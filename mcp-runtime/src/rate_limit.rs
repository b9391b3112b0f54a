//! Rate limits, as a method or a group declares them (the limiter is `core::rate`).

use std::time::Duration;

/// A rate limit: at most `count` calls per `period`, up to `burst` of them at once, counted
/// per caller ([`crate::Caller`]) or for the method as a whole. Calls past it are refused with
/// -32429 and `data.retryAfterMs` (HTTP 429 and `Retry-After` where the face answers one call).
///
/// Written on a method as `#[rpc_method(rate_limit(limit = "60/min", burst = 10))]`, or as a
/// group's default, which every method of the group without one of its own takes:
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::{ApiGroup, RateLimit};
///
/// pub const MCP: ApiGroup =
///     ApiGroup::mcp("mcp").rate_limit(RateLimit::new(600, Duration::from_secs(60)).burst(50));
/// let r = MCP.default_rate_limit().unwrap();
/// assert_eq!((r.count(), r.burst_size()), (600, 50));
/// assert_eq!(r.interval(), Duration::from_millis(100));
/// ```
///
/// The limiter is the generic cell rate algorithm (one timestamp per caller and method): a
/// caller that waited long enough has its whole burst again, and one that keeps calling is
/// let through once per `period / count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateLimit {
    count: u32,
    period: Duration,
    burst: u32,
    per: RatePer,
}

/// Whom a [`RateLimit`] counts calls of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RatePer {
    /// Each caller has the whole limit (`per = "caller"`, the default).
    Caller,
    /// All callers share it (`per = "method"`).
    Method,
}

impl RateLimit {
    /// `count` calls per `period`, per caller, up to `count` at once.
    ///
    /// # Panics
    ///
    /// When `count` or `period` is zero; in a `const` (a group's default), that is a
    /// compile error.
    pub const fn new(count: u32, period: Duration) -> Self {
        assert!(count > 0, "a rate limit allows at least one call");
        assert!(!period.is_zero(), "a rate limit's period is not zero");
        Self {
            count,
            period,
            burst: count,
            per: RatePer::Caller,
        }
    }

    /// At most `burst` calls at once (then one per `period / count`).
    ///
    /// # Panics
    ///
    /// When `burst` is zero (a compile error in a `const`).
    pub const fn burst(mut self, burst: u32) -> Self {
        assert!(burst > 0, "a rate limit's burst is at least 1");
        self.burst = burst;
        self
    }

    /// Counted for the method as a whole, not per caller.
    pub const fn per_method(mut self) -> Self {
        self.per = RatePer::Method;
        self
    }

    /// The calls allowed per period.
    pub const fn count(&self) -> u32 {
        self.count
    }

    /// The period.
    pub const fn period(&self) -> Duration {
        self.period
    }

    /// The calls allowed at once.
    pub const fn burst_size(&self) -> u32 {
        self.burst
    }

    /// Whom it counts.
    pub const fn per(&self) -> RatePer {
        self.per
    }

    /// The steady pace: one call per `period / count`.
    pub fn interval(&self) -> Duration {
        self.period / self.count
    }

    /// How far ahead of the steady pace a caller may be (`burst - 1` intervals).
    pub fn tolerance(&self) -> Duration {
        self.interval() * (self.burst - 1)
    }
}
