//! API groups: the unit of publication.

use crate::rate_limit::RateLimit;

/// An API group: a named set of methods served at its own endpoints.
///
/// Every method names the groups it belongs to. A group made with [`ApiGroup::mcp`] is
/// published over JSON-RPC *and* MCP (every method of it is a tool); one made with
/// [`ApiGroup::rpc`] is published over JSON-RPC only.
///
/// Groups are plain constants, so the `#[rpc_method]` macro can check at compile time that
/// every method of an MCP group has a valid MCP tool name.
///
/// ```
/// use mcp_runtime::ApiGroup;
///
/// pub const MCP: ApiGroup = ApiGroup::mcp("mcp");
/// pub const INTERNAL: ApiGroup = ApiGroup::rpc("internal");
/// assert!(MCP.is_mcp() && !INTERNAL.is_mcp());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ApiGroup {
    name: &'static str,
    mcp: bool,
    protected: bool,
    rate_limit: Option<RateLimit>,
}

impl ApiGroup {
    /// A group published over JSON-RPC and as MCP tools.
    pub const fn mcp(name: &'static str) -> Self {
        Self {
            name,
            mcp: true,
            protected: false,
            rate_limit: None,
        }
    }

    /// A group published over JSON-RPC only.
    pub const fn rpc(name: &'static str) -> Self {
        Self {
            name,
            mcp: false,
            protected: false,
            rate_limit: None,
        }
    }

    /// Marks the group as protected: requests need a token (see the server's auth options).
    pub const fn protected(mut self) -> Self {
        self.protected = true;
        self
    }

    /// The rate limit of every method of the group that declares none of its own
    /// (`#[rpc_method(rate_limit(...))]`); see [`RateLimit`].
    pub const fn rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limit = Some(limit);
        self
    }

    /// The group's default rate limit, if it has one.
    pub const fn default_rate_limit(&self) -> Option<RateLimit> {
        self.rate_limit
    }

    /// The group's name, as it appears in URLs (`/rpc/{name}/v1`).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the group is published over MCP.
    pub const fn is_mcp(&self) -> bool {
        self.mcp
    }

    /// Whether the group requires a token.
    pub const fn is_protected(&self) -> bool {
        self.protected
    }
}

/// The MCP tool-name rule (`^[a-zA-Z0-9_.-]{1,128}$`), as text for messages.
pub const TOOL_NAME_RULE: &str = "^[a-zA-Z0-9_.-]{1,128}$";

/// Whether `name` is a valid MCP tool name (`^[a-zA-Z0-9_.-]{1,128}$`).
///
/// A `const fn`, so the macros evaluate it at compile time.
pub const fn is_valid_tool_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 128 {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-') {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("Catalog.search"));
        assert!(is_valid_tool_name("a-b_c.d9"));
        assert!(!is_valid_tool_name("Bad:ping"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("with space"));
        assert!(is_valid_tool_name(&"a".repeat(128)));
        assert!(!is_valid_tool_name(&"a".repeat(129)));
        assert!(!is_valid_tool_name("é"));
    }
}
