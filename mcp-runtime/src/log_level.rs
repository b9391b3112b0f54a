//! Logging to the client (`notifications/message`): the levels of RFC 5424, as MCP names them.

use std::str::FromStr;

/// A log level, least severe first; a client's chosen level admits itself and every more
/// severe one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a log level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown log level `{0}` (expected one of debug, info, notice, warning, error, critical, alert, emergency)"
)]
pub struct UnknownLevel(pub String);

impl FromStr for LogLevel {
    type Err = UnknownLevel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LogLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| UnknownLevel(s.chars().take(32).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_order_by_severity() {
        for l in LogLevel::ALL {
            assert_eq!(l.as_str().parse::<LogLevel>(), Ok(l));
        }
        assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Alert < LogLevel::Emergency);
        assert!("verbose".parse::<LogLevel>().is_err());
    }
}
