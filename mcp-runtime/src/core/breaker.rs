//! A circuit breaker on the Redis connection: after [`FAILURES`] transport failures in a row
//! (a timeout, a refused or dropped connection) Redis is not asked for a while, and every
//! command fails at once instead of after its timeouts; then one command is let through as a
//! probe, and its outcome closes the breaker or opens it for twice as long (up to [`LONGEST`]).
//!
//! With Redis hung, each command otherwise waits for the connection's timeouts (two of 500 ms
//! with the retry), so every cached call took a second: the cache fails open and the locks
//! fail closed as before, but at once. Errors Redis answers (a script to load, a wrong type)
//! are answers, not failures. Written here, not taken from a crate: it wraps the one
//! `ConnectionLike` every command goes through, and a generic breaker would wrap each call's
//! future instead, for the same forty lines.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis::{Cmd, Pipeline, RedisError, RedisFuture, RedisResult, Value};

/// Transport failures in a row that open the breaker.
pub(crate) const FAILURES: u32 = 3;
/// How long it first stays open.
pub(crate) const FIRST: Duration = Duration::from_millis(500);
/// The longest it stays open between probes.
pub(crate) const LONGEST: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
struct State {
    /// Transport failures in a row.
    failures: u32,
    /// While open: until when no command is sent.
    open_until: Option<Instant>,
    /// How long it was open last (doubles with each failed probe).
    open_for: Duration,
    /// A probe is out: the others still fail at once.
    probing: bool,
}

/// The breaker's state, shared by every handle on the connection.
#[derive(Debug, Default)]
pub(crate) struct Breaker(Mutex<State>);

/// Whether a command may be sent, and whether it is the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    Closed,
    Probe,
}

impl Breaker {
    /// Whether a command may be sent at `now`: an error to answer instead when not.
    pub(crate) fn admit(&self, now: Instant) -> RedisResult<Admit> {
        let Ok(mut s) = self.0.lock() else {
            return Ok(Admit::Closed);
        };
        let Some(until) = s.open_until else {
            return Ok(Admit::Closed);
        };
        if now < until || s.probing {
            let wait = until.saturating_duration_since(now).as_millis();
            return Err(RedisError::from(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                format!(
                    "Redis is unavailable: not asked for another {wait} ms after {} failures in a row",
                    s.failures
                ),
            )));
        }
        s.probing = true;
        Ok(Admit::Probe)
    }

    /// Counts a command's outcome at `now`.
    pub(crate) fn settle<T>(&self, now: Instant, admit: Admit, outcome: &RedisResult<T>) {
        let Ok(mut s) = self.0.lock() else {
            return;
        };
        let failed = outcome.as_ref().err().is_some_and(|e| {
            e.is_timeout()
                || e.is_connection_dropped()
                || e.is_connection_refusal()
                || e.is_io_error()
        });
        if admit == Admit::Probe {
            s.probing = false;
        }
        if !failed {
            if s.open_until.is_some() {
                tracing::info!("Redis answers again: the breaker is closed");
            }
            *s = State::default();
            return;
        }
        s.failures = s.failures.saturating_add(1);
        if admit == Admit::Probe || (s.open_until.is_none() && s.failures >= FAILURES) {
            s.open_for = if s.open_for.is_zero() {
                FIRST
            } else {
                (s.open_for * 2).min(LONGEST)
            };
            s.open_until = Some(now + s.open_for);
            tracing::warn!(
                failures = s.failures,
                open_ms = s.open_for.as_millis() as u64,
                "Redis does not answer: not asked until the breaker's next probe"
            );
        }
    }
}

/// The shared connection, every command through the breaker.
#[derive(Clone)]
pub(crate) struct Guarded {
    pub(crate) con: super::redis_conn::Conn,
    pub(crate) breaker: std::sync::Arc<Breaker>,
}

impl Guarded {
    /// `cmd` on every master of a cluster (on the one Redis otherwise), through the breaker.
    pub(crate) async fn on_every_master(&mut self, cmd: Cmd) -> RedisResult<()> {
        let admit = self.breaker.admit(Instant::now())?;
        let outcome = self.con.on_every_master(cmd).await;
        self.breaker.settle(Instant::now(), admit, &outcome);
        outcome
    }
}

impl ConnectionLike for Guarded {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let admit = self.breaker.admit(Instant::now())?;
            let outcome = self.con.req_packed_command(cmd).await;
            self.breaker.settle(Instant::now(), admit, &outcome);
            outcome
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let admit = self.breaker.admit(Instant::now())?;
            let outcome = self.con.req_packed_commands(pipeline, offset, count).await;
            self.breaker.settle(Instant::now(), admit, &outcome);
            outcome
        })
    }

    fn get_db(&self) -> i64 {
        self.con.get_db()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout() -> RedisResult<()> {
        Err(RedisError::from(std::io::Error::from(
            std::io::ErrorKind::TimedOut,
        )))
    }

    #[test]
    fn it_opens_after_failures_in_a_row_probes_and_backs_off() {
        let b = Breaker::default();
        let t0 = Instant::now();
        for _ in 0..FAILURES - 1 {
            let a = b.admit(t0).unwrap();
            b.settle(t0, a, &timeout());
        }
        // An answer in between starts the count again.
        b.settle(t0, Admit::Closed, &Ok(()));
        for _ in 0..FAILURES {
            let a = b.admit(t0).unwrap();
            b.settle(t0, a, &timeout());
        }
        let refused = b.admit(t0).unwrap_err();
        assert!(
            refused.to_string().contains("Redis is unavailable"),
            "{refused}"
        );
        assert!(
            refused.to_string().contains("3 failures in a row"),
            "{refused}"
        );
        // Past the first interval one probe goes; the others still fail at once.
        let t1 = t0 + FIRST;
        assert_eq!(b.admit(t1).unwrap(), Admit::Probe);
        assert!(b.admit(t1).is_err(), "one probe at a time");
        // A failed probe opens it for twice as long.
        b.settle(t1, Admit::Probe, &timeout());
        assert!(b.admit(t1 + FIRST).is_err());
        assert_eq!(b.admit(t1 + FIRST * 2).unwrap(), Admit::Probe);
        // An answered probe closes it.
        b.settle(t1 + FIRST * 2, Admit::Probe, &Ok(()));
        assert_eq!(b.admit(t1 + FIRST * 2).unwrap(), Admit::Closed);
    }

    #[test]
    fn errors_redis_answers_are_not_failures() {
        let b = Breaker::default();
        let t0 = Instant::now();
        let answered: RedisResult<()> = Err(RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "wrong type",
        )));
        for _ in 0..FAILURES * 2 {
            b.settle(t0, Admit::Closed, &answered);
        }
        assert_eq!(b.admit(t0).unwrap(), Admit::Closed);
    }

    #[test]
    fn the_interval_is_bounded() {
        let b = Breaker::default();
        let mut t = Instant::now();
        for _ in 0..FAILURES {
            b.settle(t, Admit::Closed, &timeout());
        }
        for _ in 0..20 {
            t += LONGEST;
            let a = b.admit(t).unwrap();
            assert_eq!(a, Admit::Probe);
            b.settle(t, a, &timeout());
        }
        assert!(b.0.lock().unwrap().open_for <= LONGEST);
    }
}
