//! Strict JSON: like `serde_json::from_str::<Value>`, but a duplicate object key is an error
//! (serde_json keeps the last one silently, which would let a client smuggle a second value
//! past a check that read the first).

use std::borrow::Cow;
use std::collections::HashSet;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A seed that reads any JSON value, refusing duplicate keys at every depth and values nested
/// deeper than its bound.
#[derive(Clone, Copy)]
pub(crate) struct Strict {
    /// Levels of arrays and objects still allowed.
    left: usize,
    /// The bound, for the error message.
    max: usize,
}

impl Strict {
    /// At most `depth` levels of arrays and objects (serde_json stops at 128 in any case).
    pub(crate) fn new(depth: usize) -> Self {
        Self {
            left: depth,
            max: depth,
        }
    }

    /// The seed one level deeper; an error past the bound.
    pub(crate) fn inner<E: de::Error>(self) -> Result<Self, E> {
        match self.left.checked_sub(1) {
            Some(left) => Ok(Self { left, ..self }),
            None => Err(E::custom(format_args!(
                "nested deeper than {} levels",
                self.max
            ))),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("non-finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.inner()?;
        let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(inner)? {
            v.push(item);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Value, A::Error> {
        let inner = self.inner()?;
        let mut map = Map::new();
        while let Some(key) = m.next_key::<String>()? {
            insert_member(&mut map, key, &mut m, inner)?;
        }
        Ok(Value::Object(map))
    }
}

/// Reads the value of the member `key` into `map` with `seed`; a key `map` has already is
/// the duplicate-key error. One hash per key: the entry both detects the duplicate and
/// inserts.
pub(crate) fn insert_member<'de, A: MapAccess<'de>>(
    map: &mut Map<String, Value>,
    key: String,
    m: &mut A,
    seed: Strict,
) -> Result<(), A::Error> {
    match map.entry(key) {
        serde_json::map::Entry::Occupied(e) => Err(duplicate(e.key())),
        serde_json::map::Entry::Vacant(e) => {
            e.insert(m.next_value_seed(seed)?);
            Ok(())
        }
    }
}

/// A seed that checks a value as [`Strict`] does (no duplicate key at any depth, nesting
/// bound) without building it: for the members of a message the server reads past.
#[derive(Clone, Copy)]
pub(crate) struct StrictSkip(pub(crate) Strict);

impl<'de> DeserializeSeed<'de> for StrictSkip {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictSkip {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = Self(self.0.inner()?);
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        let inner = Self(self.0.inner()?);
        let mut keys = Keys::default();
        while let Some(key) = m.next_key_seed(Key)? {
            keys.insert(key)?;
            m.next_value_seed(inner)?;
        }
        Ok(())
    }
}

/// An object key, borrowed from the text when it has no escapes.
pub(crate) struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

/// The keys of one object seen so far, to refuse a duplicate: the first few in place (most
/// objects are small), then a hash set, so an object of many keys stays linear.
#[derive(Default)]
pub(crate) struct Keys<'de> {
    few: [Option<Cow<'de, str>>; FEW_KEYS],
    many: Option<HashSet<Cow<'de, str>>>,
}

const FEW_KEYS: usize = 8;

impl<'de> Keys<'de> {
    /// Records `key`; a duplicate is an error.
    pub(crate) fn insert<E: de::Error>(&mut self, key: Cow<'de, str>) -> Result<(), E> {
        if let Some(many) = &mut self.many {
            return match many.contains(&key) {
                true => Err(duplicate(&key)),
                false => {
                    many.insert(key);
                    Ok(())
                }
            };
        }
        for slot in &mut self.few {
            match slot {
                Some(k) if *k == key => return Err(duplicate(&key)),
                Some(_) => {}
                None => {
                    *slot = Some(key);
                    return Ok(());
                }
            }
        }
        let mut many: HashSet<_> = self.few.iter_mut().filter_map(Option::take).collect();
        many.insert(key);
        self.many = Some(many);
        Ok(())
    }
}

/// The duplicate-key error.
pub(crate) fn duplicate<E: de::Error>(key: &str) -> E {
    E::custom(format!("duplicate key `{}`", truncate(key)))
}

fn truncate(s: &str) -> String {
    if s.len() <= 64 {
        s.to_owned()
    } else {
        format!("{}…", &s[..s.floor_char_boundary(64)])
    }
}

/// Parses JSON text, refusing duplicate keys and nesting deeper than `depth` levels.
pub(crate) fn from_str_depth(s: &str, depth: usize) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(s);
    let v = Strict::new(depth).deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// The error's message without serde_json's ` at line L column C` suffix (positions inside a
/// params value would not match the request body).
pub(crate) fn message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// Whether an error is a duplicate key (not a syntax error).
#[cfg(test)]
fn is_duplicate(e: &serde_json::Error) -> bool {
    e.is_data() && e.to_string().starts_with("duplicate key")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn from_str(s: &str) -> Result<Value, serde_json::Error> {
        from_str_depth(s, 128)
    }

    #[test]
    fn duplicates_are_errors_at_any_depth() {
        assert_eq!(
            from_str(r#"{"a":1,"b":[{"c":2}]}"#).unwrap(),
            json!({"a":1,"b":[{"c":2}]})
        );
        let e = from_str(r#"{"a":1,"a":2}"#).unwrap_err();
        assert!(is_duplicate(&e), "{e}");
        assert!(from_str(r#"{"x":[{"k":1,"k":1}]}"#).is_err());
        assert!(!is_duplicate(&from_str("{").unwrap_err()));
        assert!(from_str("1 2").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(200_000);
        assert!(from_str(&deep).is_err());
    }
}
