use std::cell::RefCell;

use mcp_runtime::prelude::*;

const G: ApiGroup = ApiGroup::mcp("g");

/// A store with interior mutability that cannot be shared between threads.
struct Db {
    notes: RefCell<Vec<String>>,
}

/// Counts the notes.
#[rpc_method(name = "Notes.count", groups = [G])]
fn count(db: State<Db>) -> usize {
    db.notes.borrow().len()
}

fn main() {}
