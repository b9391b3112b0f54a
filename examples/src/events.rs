//! `Events.counts`: how many of each pipeline event this process has seen.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::prelude::*;

use crate::INTERNAL;

/// One counter per kind, in `EventKind::ALL`'s order: a listener on every event of every call
/// should cost an atomic add, not a lock and a map lookup.
static COUNTS: [AtomicU64; EventKind::ALL.len()] =
    [const { AtomicU64::new(0) }; EventKind::ALL.len()];

/// Counts every event (registered for each kind on the server builder).
pub fn count(event: &mut Event<'_>) -> Result<(), RpcError> {
    if let Some(i) = EventKind::ALL.iter().position(|&k| k == event.kind()) {
        COUNTS[i].fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Counts of each event seen so far in this process, e.g. `{"request": 12, "error": 1, ...}`.
#[rpc_method(name = "Events.counts", groups = [INTERNAL])]
pub fn counts() -> BTreeMap<String, u64> {
    EventKind::ALL
        .iter()
        .zip(&COUNTS)
        .map(|(k, c)| (k.name().to_owned(), c.load(Ordering::Relaxed)))
        .filter(|(_, n)| *n > 0)
        .collect()
}
