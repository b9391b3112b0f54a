//! Server-sent events as a test reads them: one parser for this repository's test crates.

/// One server-sent event.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// `id:`
    pub id: Option<String>,
    /// `event:`
    pub event: Option<String>,
    /// `retry:`
    pub retry: Option<String>,
    /// `data:`
    pub data: String,
}

/// The events of a whole SSE body, which must end with a blank line; every field must be one
/// of `id`, `event`, `retry`, `data` (a test fails on anything else).
pub fn sse_events(text: &str) -> Vec<SseEvent> {
    assert!(
        text.is_empty() || text.ends_with("\n\n"),
        "SSE body must end with a blank line: {text:?}"
    );
    sse_events_so_far(text)
}

/// The complete events of a stream read so far (a partial last one is left out).
pub fn sse_events_so_far(text: &str) -> Vec<SseEvent> {
    let complete = text.rfind("\n\n").map_or("", |end| &text[..end]);
    complete
        .split("\n\n")
        .filter(|f| !f.is_empty())
        .map(|frame| {
            let mut e = SseEvent::default();
            for line in frame.split('\n') {
                let (field, value) = line
                    .split_once(':')
                    .unwrap_or_else(|| panic!("bad SSE line {line:?}"));
                let value = value.strip_prefix(' ').unwrap_or(value).to_owned();
                match field {
                    "id" => e.id = Some(value),
                    "event" => e.event = Some(value),
                    "retry" => e.retry = Some(value),
                    "data" => e.data = value,
                    other => panic!("unexpected SSE field {other:?} in {frame:?}"),
                }
            }
            e
        })
        .collect()
}
