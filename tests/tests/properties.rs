//! Property tests: any JSON value sent as a request gets exactly one well-formed response
//! (none for a notification), and cache keys do not depend on object key order.

use mcp_runtime::Limits;
use mcp_runtime::test_util::cache_key;
use mcp_runtime::test_util::handle;
use mcp_runtime::{Environment, Server};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[a-z\\.:$]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z$]{0,6}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Request-shaped values: JSON-RPC-ish objects with random members, to reach deeper paths.
fn arb_request() -> impl Strategy<Value = Value> {
    let method = prop_oneof![
        Just(json!("Catalog.ping")),
        Just(json!("Catalog.get")),
        Just(json!("Catalog.search")),
        Just(json!("Nope.nothing")),
        arb_json(),
    ];
    let id = prop_oneof![
        Just(None),
        Just(Some(json!(1))),
        Just(Some(json!("a"))),
        arb_json().prop_map(Some)
    ];
    let version = prop_oneof![
        Just(Some(json!("2.0"))),
        Just(None),
        arb_json().prop_map(Some)
    ];
    (method, id, version, prop::option::of(arb_json())).prop_map(|(m, id, v, p)| {
        let mut o = Map::new();
        if let Some(v) = v {
            o.insert("jsonrpc".into(), v);
        }
        o.insert("method".into(), m);
        if let Some(id) = id {
            o.insert("id".into(), id);
        }
        if let Some(p) = p {
            o.insert("params".into(), p);
        }
        Value::Object(o)
    })
}

fn is_notification(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        !o.contains_key("id")
            && o.get("method")
                .is_some_and(|m| m.as_str().is_some_and(|s| !s.trim().is_empty()))
    }) && v.get("jsonrpc").is_none_or(|j| j == "2.0")
        && v.get("params")
            .is_none_or(|p| p.is_null() || p.is_object() || p.is_array())
}

fn well_formed(answer: &Value) -> bool {
    let Some(o) = answer.as_object() else {
        return false;
    };
    o.get("jsonrpc") == Some(&json!("2.0"))
        && o.contains_key("id")
        && (o.contains_key("result") ^ o.contains_key("error"))
        && o.get("error")
            .is_none_or(|e| e["code"].is_i64() && e["message"].is_string())
}

fn check(server: &Server, rt: &tokio::runtime::Runtime, body: &Value) -> Result<(), TestCaseError> {
    let catalog = server
        .registry()
        .catalog("mcp", 1)
        .expect("catalog")
        .clone();
    let bytes = serde_json::to_vec(body).unwrap();
    let reply = rt.block_on(handle(
        server.core(),
        &catalog,
        &bytes,
        &Limits::default(),
        None,
    ));
    match (&reply.body, body) {
        (None, Value::Array(items)) => prop_assert!(
            !items.is_empty() && items.iter().all(is_notification),
            "no answer for {body}"
        ),
        (None, single) => prop_assert!(is_notification(single), "no answer for {body}"),
        (Some(b), _) => {
            let answer: Value = serde_json::from_slice(b).expect("answers are JSON");
            match (body, &answer) {
                (Value::Array(items), Value::Array(answers)) => {
                    let expected = items.iter().filter(|i| !is_notification(i)).count();
                    prop_assert_eq!(
                        answers.len(),
                        expected,
                        "one answer per non-notification: {}",
                        body
                    );
                    for a in answers {
                        prop_assert!(well_formed(a), "malformed answer {} to {}", a, body);
                    }
                }
                (_, a) => prop_assert!(well_formed(a), "malformed answer {} to {}", a, body),
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_json_value_gets_exactly_one_well_formed_answer(v in arb_json()) {
        let server = examples::builder().env(Environment::PROD).build().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        check(&server, &rt, &v)?;
    }

    #[test]
    fn any_request_shaped_value_or_batch_gets_well_formed_answers(reqs in prop::collection::vec(arb_request(), 1..6), batch in any::<bool>()) {
        let server = examples::builder().env(Environment::PROD).build().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let body = if batch { Value::Array(reqs) } else { reqs.into_iter().next().unwrap() };
        check(&server, &rt, &body)?;
    }

    #[test]
    fn cache_keys_are_stable_under_key_order(pairs in prop::collection::btree_map("[a-z]{1,6}", arb_json(), 0..8), seed in any::<u64>()) {
        let forward: Map<String, Value> = pairs.clone().into_iter().collect();
        let mut items: Vec<(String, Value)> = pairs.into_iter().collect();
        // A deterministic shuffle from the seed.
        let n = items.len().max(1);
        items.rotate_left((seed as usize) % n);
        items.reverse();
        let shuffled: Map<String, Value> = items.into_iter().collect();
        prop_assert_eq!(
            cache_key("g", "M.x", 1, &Value::Object(forward.clone())),
            cache_key("g", "M.x", 1, &Value::Object(shuffled))
        );
        prop_assert_ne!(cache_key("g", "M.x", 1, &Value::Object(forward.clone())), cache_key("g", "M.x", 2, &Value::Object(forward)));
    }
}
