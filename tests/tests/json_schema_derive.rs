//! The prelude's `#[derive(JsonSchema)]` gives exactly the schema and name of schemars' own
//! derive (and the same id up to the module): the same items derived both ways, in two
//! modules.

use mcp_runtime::__private::SchemaGenerator;
use mcp_runtime::JsonSchema;
use serde_json::Value;

macro_rules! items {
    ($derive:path) => {
        /// A product.
        #[derive(serde::Serialize, serde::Deserialize, $derive)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct Product {
            /// Its id
            pub product_id: u64,
            #[schemars(length(min = 1, max = 80))]
            pub name: String,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub parts: Vec<Product>,
            pub kind: Kind,
            pub page: Page<String>,
        }

        /// What it is.
        #[derive(serde::Serialize, serde::Deserialize, Default, $derive)]
        #[serde(tag = "type")]
        pub enum Kind {
            /// Something to hold.
            #[default]
            Thing,
            Service {
                hours: u32,
            },
        }

        /// A page of items.
        #[derive(serde::Serialize, serde::Deserialize, $derive)]
        #[serde(default)]
        pub struct Page<T> {
            pub items: Vec<T>,
            pub limit: u32,
        }

        impl<T> Default for Page<T> {
            fn default() -> Self {
                Page {
                    items: Vec::new(),
                    limit: 10,
                }
            }
        }

        /// A newtype.
        #[derive(serde::Serialize, serde::Deserialize, $derive)]
        #[serde(transparent)]
        pub struct Id(pub u64);
    };
}

mod ours {
    use mcp_runtime::prelude::*;
    items!(JsonSchema);
}

mod theirs {
    items!(schemars::JsonSchema);
}

fn schema<T: JsonSchema>() -> Value {
    let mut g = SchemaGenerator::default();
    let s = g.root_schema_for::<T>();
    serde_json::to_value(s).unwrap()
}

fn same<A: JsonSchema, B: JsonSchema>() {
    assert_eq!(schema::<A>(), schema::<B>());
    assert_eq!(A::schema_name(), B::schema_name());
    assert_eq!(A::inline_schema(), B::inline_schema());
    assert_eq!(
        A::schema_id().replace("::ours::", "::"),
        B::schema_id().replace("::theirs::", "::")
    );
}

#[test]
fn the_prelude_derive_gives_the_schemas_of_schemars_derive() {
    same::<ours::Product, theirs::Product>();
    same::<ours::Kind, theirs::Kind>();
    same::<ours::Page<u8>, theirs::Page<u8>>();
    same::<ours::Id, theirs::Id>();
    assert_eq!(
        schema::<ours::Page<u8>>()["properties"]["limit"]["default"],
        10
    );
    assert!(schema::<ours::Product>().to_string().contains("Its id"));
}
