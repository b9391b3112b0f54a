//! Validation of named params against the method's compiled input schema.
//!
//! The schema is the single source of the rules (types, required, unknown keys, constraints):
//! clients see exactly what the server checks, on both faces.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use serde_json::Value;

use crate::catalog::MethodInfo;
use crate::error::{RpcError, Violation};

/// Checks `params` (an object) against the method's schema: every violation at once.
pub(crate) fn check(info: &MethodInfo, params: &Value) -> Result<(), RpcError> {
    let validator = info.validator().map_err(|e| {
        RpcError::internal(format!(
            "the schema of {} does not compile: {e}",
            info.name()
        ))
    })?;
    if validator.is_valid(params) {
        return Ok(());
    }
    let mut out = Vec::new();
    for err in validator.iter_errors(params) {
        let segments: Vec<String> = err
            .instance_path()
            .segments()
            .map(|s| match s {
                LocationSegment::Property(p) => p.into_owned(),
                LocationSegment::Index(i) => i.to_string(),
            })
            .collect();
        let at_root = segments.is_empty();
        match err.kind() {
            ValidationErrorKind::Required { property } => {
                let p = property.as_str().unwrap_or_default();
                let message = if at_root {
                    format!("Required parameter \"{p}\" not passed")
                } else {
                    format!("Missing required key for property: '{p}'")
                };
                out.push(violation(&segments, Some(p), "required", message));
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for u in unexpected {
                    let message = if at_root {
                        format!("Unknown parameter \"{u}\"")
                    } else {
                        format!("Unknown property \"{u}\"")
                    };
                    out.push(violation(
                        &segments,
                        Some(u),
                        "additionalProperties",
                        message,
                    ));
                }
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
                let message = if segments.len() == 1 {
                    format!(
                        "Parameter \"{}\" must be of type {expected}, {given} given",
                        segments[0]
                    )
                } else {
                    format!("Value must be of type {expected}, {given} given")
                };
                out.push(violation(&segments, None, "type", message));
            }
            kind => {
                let keyword = kind.keyword().to_owned();
                let message = constraint_message(kind).unwrap_or_else(|| err.to_string());
                out.push(violation(&segments, None, &keyword, message));
            }
        }
    }
    Err(RpcError::violations(info.name(), out).schema_failure())
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
