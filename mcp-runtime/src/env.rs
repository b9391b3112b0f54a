//! The deployment environment (`APP_ENV`), which decides how much an error tells.

use std::borrow::Cow;

/// The environment the server runs in: `dev`, `test`, `prod`, or any other name.
///
/// `dev` and `test` (exact, case-sensitive) are *debug* environments: errors carry their
/// message chain, source location and backtrace. Every other name behaves as production.
///
/// Each server decides with its own environment, when it renders an error
/// ([`crate::RpcError::to_wire`]): servers of different environments live side by side in
/// one process, and none is affected by which was built first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Environment(Cow<'static, str>);

impl Environment {
    /// Development.
    pub const DEV: Environment = Environment(Cow::Borrowed("dev"));
    /// Test.
    pub const TEST: Environment = Environment(Cow::Borrowed("test"));
    /// Production (the default).
    pub const PROD: Environment = Environment(Cow::Borrowed("prod"));

    /// An environment by name.
    pub fn new(name: impl Into<Cow<'static, str>>) -> Self {
        Self(name.into())
    }

    /// Reads `APP_ENV`; unset or empty means `prod`.
    pub fn from_env() -> Self {
        match std::env::var("APP_ENV") {
            Ok(v) if !v.is_empty() => Self::new(v),
            _ => Self::PROD,
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.0
    }

    /// `dev` or `test`: errors tell everything.
    pub fn is_debug(&self) -> bool {
        matches!(&*self.0, "dev" | "test")
    }
}

impl Default for Environment {
    fn default() -> Self {
        Self::PROD
    }
}
