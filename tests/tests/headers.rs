//! A parameter mirrored in a header must be a string, an integer or a boolean: `build()` says
//! so, naming the method and the parameter.

use mcp_runtime::prelude::*;

const ODD: ApiGroup = ApiGroup::mcp("odd");

/// Mirrors a number, which a header cannot carry exactly.
#[rpc_method(name = "Odd.price", groups = [ODD])]
fn price(
    /// A price
    #[param(header = "Price")]
    price: f64,
) -> f64 {
    price
}

#[test]
fn a_mirrored_number_fails_the_build() {
    let e = Server::builder().build().err().expect("the build fails");
    let text = e.to_string();
    assert!(
        text.contains("method `Odd.price`, parameter `price`,")
            && text.contains(
                "`header = \"Price\"` mirrors only a string, integer or boolean parameter"
            ),
        "{text}"
    );
}
