//! `Mail.*`, `Stats.*` and `Orders.*`: assertions, caching and locking.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_runtime::Face;
use mcp_runtime::prelude::*;
use serde::Serialize;

use crate::MCP;

/// Whether a mail was accepted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MailReceipt {
    /// Always true when it returns.
    pub queued: bool,
    /// The recipient.
    pub to: String,
}

/// Send an e-mail.
///
/// The address must be valid, the subject not blank (100 characters at most), the text at
/// least 10 characters. Each caller may send 60 a minute, 10 at once.
#[rpc_method(
    name = "Mail.send",
    groups = [MCP],
    rate_limit(limit = "60/min", burst = 10)
)]
#[mcp_tool(destructive_hint = false, open_world_hint = true)]
pub fn send(
    /// Recipient address
    #[param(email, check = no_disposable_domain)]
    email: String,
    /// Subject line
    #[param(not_blank, max_length = 100)]
    subject: String,
    /// Message body
    #[param(min_length = 10)]
    text: String,
) -> MailReceipt {
    // Debug formatting escapes what the client sent: a newline or an escape sequence in the
    // subject cannot forge a log line or reach the terminal.
    tracing::info!(?email, ?subject, chars = text.len(), "mail queued");
    MailReceipt {
        queued: true,
        to: email,
    }
}

/// A check the schema cannot express: disposable mail domains are refused.
pub fn no_disposable_domain(email: &str) -> Result<(), String> {
    match email.rsplit_once('@') {
        Some((_, domain)) if domain.eq_ignore_ascii_case("mailinator.com") => {
            Err(format!("Disposable addresses ({domain}) are not accepted."))
        }
        _ => Ok(()),
    }
}

/// How many times `Stats.hits` really ran in this process, all keys together.
static HIT_RUNS: AtomicU64 = AtomicU64::new(0);

/// The result of `Stats.hits`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Hits {
    /// The key asked for.
    pub key: String,
    /// How many times the method body has run in this process (a cache hit repeats an earlier value).
    pub runs: u64,
}

/// Count hits of a key (cached for 60 s in production).
#[rpc_method(name = "Stats.hits", groups = [MCP], cache(ttl = "60s", envs = ["prod"]))]
#[mcp_tool(read_only_hint = true)]
pub fn hits(
    /// The key
    #[param(default = "a")]
    key: String,
) -> Hits {
    let runs = HIT_RUNS.fetch_add(1, Ordering::SeqCst) + 1;
    Hits { key, runs }
}

/// The outcome of `Orders.pay`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Payment {
    /// The order.
    pub order_id: u64,
    /// Whether it was paid (false: the user declined or dismissed the confirmation).
    pub paid: bool,
}

/// Pay an order. The user is asked to confirm first; an MCP client that cannot ask its user is
/// refused (-32021: it needs elicitation), while a JSON-RPC caller is a program acting for its
/// user and pays at once. Calls for one order run one at a time: a concurrent one is refused.
// The lock outlives the longest wait for the user's answer (`Limits::input_wait`, 2 min).
#[rpc_method(name = "Orders.pay", groups = [MCP], lock(param = "order_id", ttl = "150s"))]
#[mcp_tool(destructive_hint = false, idempotent_hint = true)]
pub async fn pay(
    /// The order to pay
    order_id: u64,
    /// How long the payment takes, in milliseconds (for demos and tests)
    #[param(default = 0, max = 5000)]
    hold_ms: u64,
    ctx: &RequestContext,
) -> Result<Payment, RpcError> {
    // Fail-closed: an MCP client that cannot be asked gets the error; only the JSON-RPC face,
    // a program acting for its user by design, goes on without asking.
    let confirmed = match ctx.confirm(format!("Pay order {order_id}?")).await {
        Ok(yes) => yes,
        Err(_) if ctx.face() == Face::JsonRpc => true,
        Err(e) => return Err(e),
    };
    if !confirmed {
        return Ok(Payment {
            order_id,
            paid: false,
        });
    }
    tokio::time::sleep(Duration::from_millis(hold_ms)).await;
    Ok(Payment {
        order_id,
        paid: true,
    })
}
