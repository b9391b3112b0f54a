//! No startup surprises: a method taking a `State<T>`, or a service method called on an
//! instance, whose state no `ServerBuilder::state` provided makes `build()` fail, naming the
//! method and the type (every call would fail otherwise); `cli check` reports the same.

use mcp_runtime::prelude::*;

const G: ApiGroup = ApiGroup::rpc("state_check");

/// The database.
pub struct Db;

/// Lists orders.
#[rpc_method(name = "Orders.list", groups = [G])]
fn list(_db: State<Db>, _ctx: &RequestContext) -> u32 {
    0
}

/// A shop, given as state.
pub struct Shop;

#[rpc_service(name = "Shop", groups = [G])]
impl Shop {
    /// Whether it is open.
    #[rpc_method]
    fn open(&self) -> bool {
        true
    }
}

#[test]
fn build_names_each_method_and_the_state_it_lacks() {
    let Err(e) = Server::builder().build() else {
        panic!("build() must refuse methods whose state is missing");
    };
    assert_eq!(
        e.to_string(),
        concat!(
            "methods need state that was not provided:\n",
            "  - method `Orders.list` needs state `missing_state::Db`, which no `ServerBuilder::state` provides (defined at missing_state::list (tests/tests/missing_state.rs:14))\n",
            "  - method `Shop.open` needs state `missing_state::Shop`, which no `ServerBuilder::state` provides (defined at missing_state::Shop::open (tests/tests/missing_state.rs:25))"
        )
    );
}

#[test]
fn check_reports_the_same() {
    let problems = mcp_runtime::cli::check(Server::builder().state(Db)).unwrap_err();
    assert_eq!(
        problems,
        [
            "method `Shop.open` needs state `missing_state::Shop`, which no `ServerBuilder::state` provides (defined at missing_state::Shop::open (tests/tests/missing_state.rs:25))"
        ]
    );
}

#[test]
fn with_the_states_it_builds() {
    Server::builder()
        .state(Db)
        .state(Shop)
        .build()
        .expect("every state provided");
}

/// Only its context.
#[rpc_method(name = "Ctx.only", groups = [G])]
fn ctx_only(ctx: &RequestContext) -> bool {
    ctx.is_cancelled()
}

/// No context at all.
#[rpc_method(name = "Ctx.none", groups = [G])]
fn ctx_none(n: u32) -> u32 {
    n
}

#[test]
fn the_record_says_which_methods_take_a_context() {
    let server = Server::builder().state(Db).state(Shop).build().unwrap();
    let catalog = server.registry().catalog("state_check", 1).unwrap();
    let takes = |m: &str| catalog.get(m).unwrap().def.takes_context();
    assert!(takes("Ctx.only"), "a &RequestContext parameter");
    assert!(takes("Orders.list"), "State<T>");
    assert!(takes("Shop.open"), "a service instance");
    assert!(!takes("Ctx.none"));
}
