//! Responses every route writes: JSON bodies, bodies of frames written without a copy,
//! `Retry-After`, and the work that runs once a body has been written.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use crate::error::codes;
use crate::mcp::handler::{Answer, error_body};

pub(crate) fn json_response(status: StatusCode, body: impl Into<axum::body::Body>) -> Response {
    let mut res = Response::new(body.into());
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// The body of one answer: its written bytes, then its shared ones (a precomputed page) as a
/// second frame, copied into nothing.
pub(crate) fn answer_body(answer: crate::edge::write::AnswerBody) -> Body {
    if answer.parts().1.is_empty() {
        return Body::from(answer.into_vec());
    }
    frames_body(answer.into_frames().collect())
}

/// A body of frames with an exact length: hyper sends the length header and writes the frames
/// with vectored writes, copying none.
pub(crate) fn frames_body(frames: Vec<Bytes>) -> Body {
    let len = frames.iter().map(Bytes::len).sum::<usize>() as u64;
    Body::new(Frames {
        frames: frames.into(),
        len,
    })
}

struct Frames {
    frames: std::collections::VecDeque<Bytes>,
    len: u64,
}

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let next = self.frames.pop_front();
        if let Some(b) = &next {
            self.len -= b.len() as u64;
        }
        std::task::Poll::Ready(next.map(|b| Ok(http_body::Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.len)
    }
}

/// `Retry-After` in whole seconds, rounded up (a wait under a second is still "1": `0` would
/// invite a retry at once). The exact wait is the body's `data.retryAfterMs`.
pub(crate) fn retry_after(res: &mut Response, wait: std::time::Duration) {
    let secs = wait.as_millis().div_ceil(1000).max(1);
    if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
        res.headers_mut().insert(header::RETRY_AFTER, v);
    }
}

/// A body that runs the `post_response` work once it has been written (or dropped).
struct AfterBody {
    inner: axum::body::Body,
    after: Option<crate::core::events::AfterResponse>,
}

impl http_body::Body for AfterBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let r = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if let std::task::Poll::Ready(None) = r
            && let Some(a) = self.after.take()
        {
            a.run();
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for AfterBody {
    fn drop(&mut self) {
        if let Some(a) = self.after.take() {
            a.run();
        }
    }
}

/// Runs `after` once `res`'s body has been written.
pub(crate) fn run_after(
    res: Response,
    after: Option<crate::core::events::AfterResponse>,
) -> Response {
    match after {
        Some(a) if !a.is_empty() => {
            let (parts, body) = res.into_parts();
            Response::from_parts(
                parts,
                axum::body::Body::new(AfterBody {
                    inner: body,
                    after: Some(a),
                }),
            )
        }
        _ => res,
    }
}

pub(crate) fn answer_response(a: Answer) -> Response {
    let mut res = json_response(
        StatusCode::from_u16(a.status).unwrap_or(StatusCode::OK),
        answer_body(a.body),
    );
    if let Some(wait) = a.retry_after {
        retry_after(&mut res, wait);
    }
    res
}

pub(crate) fn plain_error(status: StatusCode, code: i32, message: &str) -> Response {
    json_response(status, error_body(None, code, message, None))
}

pub(crate) fn busy() -> Response {
    plain_error(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::INTERNAL_ERROR,
        "Server busy: too many calls in progress, try again later",
    )
}

/// 503 when the session store fails or is full. Its message is the store's own, written for
/// clients (a Redis store logs the Redis error and says only that it is unavailable).
pub(crate) fn store_unavailable(e: &crate::RpcError) -> Response {
    plain_error(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::INTERNAL_ERROR,
        e.message(),
    )
}

pub(crate) fn missing_session() -> Response {
    plain_error(
        StatusCode::NOT_FOUND,
        codes::INVALID_REQUEST,
        "Session not found",
    )
}

/// Tells nginx-style proxies not to buffer the stream (a constant: a `&str` name is parsed
/// on every insert).
const X_ACCEL_BUFFERING: header::HeaderName = header::HeaderName::from_static("x-accel-buffering");

pub(crate) fn sse_response(body: Body) -> Response {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    h.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    r
}

/// `Content-Language` and `Vary: Accept-Language` (merged into an existing `Vary`).
pub(crate) fn set_language(h: &mut HeaderMap, lang: &str) {
    if let Ok(v) = HeaderValue::from_str(lang) {
        h.insert(header::CONTENT_LANGUAGE, v);
    }
    merge_vary(h);
}

/// Adds `Accept-Language` to `Vary` unless it is there (or `*`).
pub(crate) fn merge_vary(h: &mut HeaderMap) {
    let vary = h
        .get(header::VARY)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let merged = match vary {
        Some(v)
            if v.split(',')
                .any(|x| x.trim().eq_ignore_ascii_case("accept-language") || x.trim() == "*") =>
        {
            v
        }
        Some(v) if !v.trim().is_empty() => format!("{v}, Accept-Language"),
        _ => "Accept-Language".to_owned(),
    };
    if let Ok(v) = HeaderValue::from_str(&merged) {
        h.insert(header::VARY, v);
    }
}
