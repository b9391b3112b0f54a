//! `#[rpc_service]`: `&self` methods and an associated fn; `concat = ":"` gives `Bad:ping`, a
//! name that is fine in a JSON-RPC-only group.
#![deny(warnings)]

use mcp_runtime::prelude::*;

pub const MCP: ApiGroup = ApiGroup::mcp("mcp");
pub const INTERNAL: ApiGroup = ApiGroup::rpc("internal");

#[derive(Default)]
pub struct Bad {
    greeting: String,
}

#[rpc_service(name = "Bad", concat = ":", groups = [INTERNAL])]
impl Bad {
    /// Ping through a service method.
    #[rpc_method]
    pub fn ping(&self) -> String {
        self.greeting.clone()
    }

    /// An associated function: no instance needed.
    #[rpc_method(version = 2)]
    pub async fn version() -> u32 {
        2
    }

    /// Not a method: left alone.
    pub fn helper(&self) -> usize {
        self.greeting.len()
    }
}

/// The default service name is the type name, the default separator `.`.
pub struct Catalog;

#[rpc_service(groups = [MCP])]
impl Catalog {
    /// Counts.
    #[rpc_method]
    #[mcp_tool(read_only_hint)]
    pub fn count(&self, #[param(default = 3)] up_to: u8) -> Vec<u8> {
        (0..up_to).collect()
    }

    /// Overrides the name and the groups.
    #[rpc_method(name = "Catalog.internal_only", groups = [INTERNAL])]
    pub fn other(&self) {}
}

fn main() {
    let b = Bad::default();
    assert_eq!(b.helper(), 0);
    let server = Server::builder()
        .state(Bad {
            greeting: "PONG".into(),
        })
        .state(Catalog)
        .build()
        .expect("valid catalog");
    let reg = server.registry();
    let v1 = reg.catalog("internal", 1).expect("internal v1");
    assert!(v1.get("Bad:ping").is_some());
    assert!(v1.get("Bad:version").is_none());
    assert!(v1.get("Catalog.internal_only").is_some());
    let v2 = reg.catalog("internal", 2).expect("internal v2");
    assert!(v2.get("Bad:ping").is_some());
    assert!(v2.get("Bad:version").is_some());

    let mcp = reg.catalog("mcp", 1).expect("mcp v1");
    let count = mcp.get("Catalog.count").expect("Catalog.count");
    assert_eq!(count.title.as_deref(), Some("Counts."));
    assert_eq!(count.def.annotations.read_only_hint, Some(true));
    assert!(mcp.get("Catalog.internal_only").is_none());
    assert!(count.def.location.rust_path.ends_with("Catalog::count"));
}
