//! Validation of named params against the method's compiled input schema.
//!
//! The schema is the single source of the rules (types, required, unknown keys, constraints):
//! clients see exactly what the server checks, on both faces.

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use serde_json::Value;

use crate::catalog::MethodInfo;
use crate::error::{RpcError, Violation, ViolationSink};

/// Checks `params` (an object) against the method's schema: every violation at once, up to
/// `cap` ([`crate::Limits::violations`]); the rest are counted (`"... and N more"`)
/// without being built, so the work past the cap is a count.
pub(crate) fn check(info: &MethodInfo, params: &Value, cap: usize) -> Result<(), RpcError> {
    let validator = info.validator().map_err(|e| {
        RpcError::internal(format!(
            "the schema of {} does not compile: {e}",
            info.name()
        ))
    })?;
    if validator.is_valid(params) {
        return Ok(());
    }
    let mut out = ViolationSink::with_cap(cap);
    let mut last: Option<(String, String)> = None;
    let mut unknown_said = false;
    for err in validator.iter_errors(params) {
        // A method without parameters: its schema has no `properties`, and the validator
        // reports each member as a false schema at the root, without its name. Every member
        // is unknown: said once, by name.
        if matches!(err.kind(), ValidationErrorKind::FalseSchema)
            && err.instance_path().as_str().is_empty()
        {
            if !unknown_said {
                unknown_said = true;
                let keys: Vec<&String> = params
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.keys())
                    .collect();
                out.extend_with(keys.len(), |i| {
                    let u = keys[i].as_str();
                    let message = format!("Unknown parameter \"{}\"", crate::error::shown(u));
                    violation(&[], Some(u), "additionalProperties", message)
                });
            }
            continue;
        }
        if let ValidationErrorKind::AdditionalProperties { unexpected } = err.kind() {
            let segments = if out.is_full() {
                Vec::new()
            } else {
                segments(&err)
            };
            let at_root = segments.is_empty();
            out.extend_with(unexpected.len(), |i| {
                let u = unexpected[i].as_str();
                let message = if at_root {
                    format!("Unknown parameter \"{}\"", crate::error::shown(u))
                } else {
                    format!("Unknown property \"{}\"", crate::error::shown(u))
                };
                violation(&segments, Some(u), "additionalProperties", message)
            });
            continue;
        }
        if out.is_full() {
            out.push_with(|| describe(&err));
            continue;
        }
        // One rule can be written as two keywords that fail together (`not_blank`: a
        // `minLength` and a `pattern`, both broken by ""): the same message at the same place
        // is said once.
        let v = describe(&err);
        if last.as_ref() == Some(&(v.pointer.clone(), v.message.clone())) {
            continue;
        }
        last = Some((v.pointer.clone(), v.message.clone()));
        out.push(v);
    }
    Err(out.into_error(info.name()).schema_failure())
}

/// The instance path of an error, as strings.
fn segments(err: &ValidationError<'_>) -> Vec<String> {
    err.instance_path()
        .segments()
        .map(|s| match s {
            LocationSegment::Property(p) => p.into_owned(),
            LocationSegment::Index(i) => i.to_string(),
        })
        .collect()
}

/// The violation of one schema error (other than `additionalProperties`).
fn describe(err: &ValidationError<'_>) -> Violation {
    let segments = segments(err);
    let at_root = segments.is_empty();
    match err.kind() {
        ValidationErrorKind::Required { property } => {
            let p = property.as_str().unwrap_or_default();
            let message = if at_root {
                format!("Required parameter \"{p}\" not passed")
            } else {
                format!("Missing required key for property: '{p}'")
            };
            violation(&segments, Some(p), "required", message)
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            let given = json_type(err.instance());
            let message = match segments.as_slice() {
                [one] => format!("Parameter \"{one}\" must be of type {expected}, {given} given"),
                _ => format!("Value must be of type {expected}, {given} given"),
            };
            violation(&segments, None, "type", message)
        }
        kind => {
            let keyword = kind.keyword().to_owned();
            let message = constraint_message(kind).unwrap_or_else(|| err.to_string());
            violation(&segments, None, &keyword, message)
        }
    }
}

/// The reference's messages for constraint keywords (Symfony Validator texts).
fn constraint_message(kind: &ValidationErrorKind) -> Option<String> {
    use ValidationErrorKind as K;
    Some(match kind {
        K::MinLength { limit: 1 } => "This value should not be blank.".to_owned(),
        K::MinLength { limit } => {
            format!("This value is too short. It should have {limit} characters or more.")
        }
        K::MaxLength { limit } => {
            format!("This value is too long. It should have {limit} characters or less.")
        }
        K::Pattern { pattern } if pattern == "\\S" => "This value should not be blank.".to_owned(),
        K::Pattern { .. } => "This value is not valid.".to_owned(),
        K::Format { format } => match format.as_str() {
            "email" | "idn-email" => "This value is not a valid email address.".to_owned(),
            "uri" | "iri" | "uri-reference" => "This value is not a valid URL.".to_owned(),
            "uuid" => "This is not a valid UUID.".to_owned(),
            "date" => "This value is not a valid date.".to_owned(),
            "date-time" => "This value is not a valid datetime.".to_owned(),
            _ => return None,
        },
        K::Minimum { limit } => format!("This value should be greater than or equal to {limit}."),
        K::Maximum { limit } => format!("This value should be less than or equal to {limit}."),
        K::ExclusiveMinimum { limit } => format!("This value should be greater than {limit}."),
        K::ExclusiveMaximum { limit } => format!("This value should be less than {limit}."),
        K::Enum { .. } => "The value you selected is not a valid choice.".to_owned(),
        K::MinItems { limit } => {
            format!("This collection should contain {limit} elements or more.")
        }
        K::MaxItems { limit } => {
            format!("This collection should contain {limit} elements or less.")
        }
        _ => return None,
    })
}

fn violation(path: &[String], last: Option<&str>, keyword: &str, message: String) -> Violation {
    let mut parts: Vec<&str> = path.iter().map(String::as_str).collect();
    if let Some(l) = last {
        parts.push(l);
    }
    let key = if parts.is_empty() {
        "unknown".to_owned()
    } else {
        parts.join(".")
    };
    let pointer: String = parts
        .iter()
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect();
    Violation {
        key,
        pointer,
        keyword: keyword.to_owned().into(),
        message,
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use crate::error::MORE_VIOLATIONS_KEY;
    const MAX_VIOLATIONS: usize = crate::Limits::DEFAULT_VIOLATIONS;
    use crate::record::MethodDef;
    use crate::registry::Registry;
    use crate::{Environment, RpcError};

    static PING: MethodDef = crate::record::fixtures::method(
        "M.ping",
        &[crate::record::fixtures::param(
            "tags",
            |g| g.subschema_for::<Vec<u32>>(),
            "",
        )],
    );

    fn check(params: Value) -> RpcError {
        let registry = Registry::build([&PING]).unwrap();
        let info = registry.catalog("g", 1).unwrap().get("M.ping").unwrap();
        super::check(info, &params, MAX_VIOLATIONS).unwrap_err()
    }

    #[test]
    fn a_method_without_parameters_names_the_unknown_ones() {
        static NONE: MethodDef = crate::record::fixtures::method("M.none", &[]);
        let registry = Registry::build([&NONE]).unwrap();
        let info = registry.catalog("g", 1).unwrap().get("M.none").unwrap();
        let e = super::check(info, &json!({"x": 1, "y": 2}), MAX_VIOLATIONS).unwrap_err();
        assert_eq!(
            e.to_wire(&Environment::PROD)["data"],
            json!({"x": ["Unknown parameter \"x\""], "y": ["Unknown parameter \"y\""]})
        );
    }

    /// 10 000 unknown parameters: 20 reported, then "... and 9980 more", on both faces'
    /// readings (the list the MCP face reads, the data the JSON-RPC face writes).
    #[test]
    fn unknown_parameters_are_capped_with_an_exact_count() {
        let params: Map<String, Value> = (0..10_000).map(|i| (format!("p{i}"), json!(i))).collect();
        let e = check(Value::Object(params));
        let list = e.violation_list().unwrap();
        assert_eq!(list.len(), MAX_VIOLATIONS + 1);
        assert_eq!(list[0].message, "Unknown parameter \"p0\"");
        assert_eq!(list[19].pointer, "/p19");
        let last = &list[MAX_VIOLATIONS];
        assert_eq!(
            (last.key.as_str(), last.pointer.as_str(), &*last.keyword),
            (MORE_VIOLATIONS_KEY, "", "truncated")
        );
        assert_eq!(last.message, "... and 9980 more");
        assert_eq!(e.violations_omitted(), 9980);
        assert!(e.is_schema_failure());
        let data = &e.to_wire(&Environment::PROD)["data"];
        assert_eq!(data.as_object().unwrap().len(), MAX_VIOLATIONS + 1);
        assert_eq!(data["..."], json!(["... and 9980 more"]));
        assert_eq!(data["p0"], json!(["Unknown parameter \"p0\""]));
    }

    /// Violations of several kinds count alike: items of a list, then unknown parameters.
    #[test]
    fn mixed_violations_are_capped_in_order() {
        let mut params = Map::new();
        params.insert("tags".into(), json!(vec!["x"; 15]));
        for i in 0..10 {
            params.insert(format!("u{i}"), json!(i));
        }
        let e = check(Value::Object(params));
        let list = e.violation_list().unwrap();
        assert_eq!(list.len(), MAX_VIOLATIONS + 1);
        assert_eq!(list.iter().filter(|v| v.keyword == "type").count(), 15);
        assert_eq!(list[MAX_VIOLATIONS].message, "... and 5 more");
        // Under the cap: no count entry.
        let e = check(json!({"tags": ["x"], "u": 1}));
        assert_eq!(e.violation_list().unwrap().len(), 2);
        assert_eq!(e.violations_omitted(), 0);
    }
}
