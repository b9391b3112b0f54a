//! `Events.counts`: how many of each pipeline event this process has seen.

use std::collections::BTreeMap;
use std::sync::Mutex;

use mcp_runtime::prelude::*;

use crate::INTERNAL;

static COUNTS: Mutex<BTreeMap<&'static str, u64>> = Mutex::new(BTreeMap::new());

/// Counts every event (registered for each kind on the server builder).
pub fn count(event: &mut Event<'_>) -> Result<(), RpcError> {
    if let Ok(mut c) = COUNTS.lock() {
        *c.entry(event.kind().name()).or_default() += 1;
    }
    Ok(())
}

/// Counts of each event seen so far in this process, e.g. `{"request": 12, "error": 1, ...}`.
#[rpc_method(name = "Events.counts", groups = [INTERNAL])]
pub fn counts() -> BTreeMap<String, u64> {
    COUNTS
        .lock()
        .map(|c| c.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
        .unwrap_or_default()
}
