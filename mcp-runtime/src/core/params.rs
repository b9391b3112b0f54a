//! Parameter preparation: positional params mapped to names, and typed conversion of each
//! parameter (called by the code `#[rpc_method]` generates).

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::catalog::MethodInfo;
use crate::error::{RpcError, Violation};
use crate::record::Params;

/// Turns the `params` member into named params: absent, `null`, `{}` and `[]` all mean none;
/// a list is mapped to the method's parameters in declaration order.
pub(crate) fn prepare(info: &MethodInfo, params: Option<Value>) -> Result<Params, RpcError> {
    match params {
        None | Some(Value::Null) => Ok(Params::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(Value::Array(list)) => {
            let expected = info.def.params.len();
            if list.len() > expected {
                return Err(RpcError::invalid_params(format!(
                    "Passed ({}) parameters and expected ({expected})",
                    list.len()
                )));
            }
            Ok(info
                .def
                .params
                .iter()
                .zip(list)
                .map(|(p, v)| (p.name.to_owned(), v))
                .collect())
        }
        Some(_) => Err(RpcError::invalid_request(
            "Invalid Request: `params` must be an object or an array",
        )),
    }
}

/// Takes `name`'s value out of `params`. The params of a call are a handful of members: a
/// scan compares a few short keys, where `remove` would SipHash the name (serde_json's map is
/// an `IndexMap` with std's hasher) and move the last member into the hole. The member stays
/// behind as `null`; nothing reads the map after the method's parameters are taken.
fn take(params: &mut Params, name: &str) -> Option<Value> {
    if params.len() > SCAN_UP_TO {
        return params.remove(name);
    }
    params
        .iter_mut()
        .find(|(key, _)| key.as_str() == name)
        .map(|(_, value)| value.take())
}

/// Up to how many members a parameter is found by a scan.
const SCAN_UP_TO: usize = 16;

fn convert<T: DeserializeOwned>(
    name: &'static str,
    value: Value,
    errs: &mut Vec<Violation>,
) -> Option<T> {
    match T::deserialize(value) {
        Ok(v) => Some(v),
        Err(e) => {
            errs.push(Violation {
                key: name.to_owned(),
                pointer: format!("/{name}"),
                keyword: "type".into(),
                message: format!("Parameter \"{name}\" is invalid: {e}"),
            });
            None
        }
    }
}

/// Takes a required parameter; a missing one is recorded in `errs`.
#[doc(hidden)]
pub fn required<T: DeserializeOwned>(
    params: &mut Params,
    name: &'static str,
    errs: &mut Vec<Violation>,
) -> Option<T> {
    match take(params, name) {
        Some(v) => convert(name, v, errs),
        None => {
            errs.push(Violation {
                key: name.to_owned(),
                pointer: format!("/{name}"),
                keyword: "required".into(),
                message: format!("Required parameter \"{name}\" not passed"),
            });
            None
        }
    }
}

/// Takes a parameter that has a default (an `Option<T>` defaults to `None`).
#[doc(hidden)]
pub fn or_default<T: DeserializeOwned>(
    params: &mut Params,
    name: &'static str,
    errs: &mut Vec<Violation>,
    default: impl FnOnce() -> T,
) -> Option<T> {
    match take(params, name) {
        Some(v) => convert(name, v, errs),
        None => Some(default()),
    }
}

/// The error for conversion or check failures, if any.
#[doc(hidden)]
pub fn finish(method: &str, errs: &mut Vec<Violation>) -> Result<(), RpcError> {
    if errs.is_empty() {
        Ok(())
    } else {
        Err(RpcError::violations(method, std::mem::take(errs)))
    }
}

/// Records the outcome of a custom check (`#[param(check = path)]`): an `Err` is a violation
/// of the parameter. The macro calls the check itself, so `fn(&str)` works for `String`.
#[doc(hidden)]
pub fn run_check<E: std::fmt::Display>(
    name: &'static str,
    outcome: Result<(), E>,
    errs: &mut Vec<Violation>,
) {
    if let Err(e) = outcome {
        errs.push(Violation {
            key: name.to_owned(),
            pointer: format!("/{name}"),
            keyword: "check".into(),
            message: e.to_string(),
        });
    }
}

/// The `ParamDef`s of a method whose parameters named like context types (`State<T>`,
/// `RequestContext`) are context ones or not depending on their types: the entries marked
/// `true` (JSON parameters), in order. `N` is their number, counted by the generated code, so
/// it is evaluated at compile time.
#[doc(hidden)]
pub const fn json_params<const K: usize, const N: usize>(
    all: [(bool, crate::record::ParamDef); K],
) -> [crate::record::ParamDef; N] {
    fn no_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::default()
    }
    const UNSET: crate::record::ParamDef = crate::record::ParamDef {
        name: "",
        description: "",
        kind: crate::record::ParamKind::Required,
        schema: no_schema,
        constraints: "",
    };
    let mut out = [UNSET; N];
    let (mut i, mut j) = (0, 0);
    while i < K {
        if all[i].0 {
            out[j] = all[i].1;
            j += 1;
        }
        i += 1;
    }
    assert!(
        j == N,
        "json_params: N is not the number of JSON parameters"
    );
    out
}
