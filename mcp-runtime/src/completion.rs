//! `completion/complete`: the values a user's completion function proposes for a prompt
//! argument or a template variable.

use std::collections::BTreeMap;
use std::future::Future;

use futures_util::future::BoxFuture;
use serde::Serialize;

use crate::error::RpcError;

/// At most this many values go back to the client (the specification's cap); [`Completion`]
/// reports the rest through `total` and `hasMore`.
pub(crate) const MAX_COMPLETION_VALUES: usize = 100;

/// What a completion function is given.
///
/// The server's shared state is there too: `req.state::<Db>()` reaches what methods take as
/// `State<Db>` (ids to complete from a store need no global).
///
/// ```
/// use std::sync::Arc;
/// use mcp_runtime::mcp::CompletionRequest;
///
/// struct Tags(Vec<&'static str>);
///
/// fn tags(req: &CompletionRequest) -> Vec<String> {
///     let Some(tags) = req.state::<Tags>() else { return Vec::new() };
///     tags.0.iter().filter(|t| t.starts_with(&req.value)).map(|t| t.to_string()).collect()
/// }
///
/// let req = CompletionRequest {
///     value: "ru".into(),
///     ..CompletionRequest::default()
/// }
/// .with_state(Tags(vec!["rust", "ruby", "go"]));
/// assert_eq!(tags(&req), ["rust", "ruby"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The argument (or template variable) being completed.
    pub argument: String,
    /// What the user has typed so far.
    pub value: String,
    /// The arguments already filled in (`context.arguments`, from revision 2025-06-18).
    pub arguments: BTreeMap<String, String>,
    /// The server's shared state ([`Self::state`]).
    pub states: States,
}

/// The shared state a [`CompletionRequest`] carries (the server's, or what a test gave it).
#[derive(Clone, Default)]
pub struct States(Option<std::sync::Arc<crate::context::StateMap>>);

impl std::fmt::Debug for States {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("States")
    }
}

/// Requests are compared by what was asked, not by the state they carry.
impl PartialEq for States {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for States {}

impl States {
    pub(crate) fn of(map: std::sync::Arc<crate::context::StateMap>) -> Self {
        Self(Some(map))
    }
}

impl CompletionRequest {
    /// The shared state of type `T` the server was built with (`ServerBuilder::state`).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<std::sync::Arc<T>> {
        self.states.0.as_ref()?.get::<T>()
    }

    /// This request with `value` among its state (for tests of a completion function).
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        let mut map = self.states.0.as_deref().cloned().unwrap_or_default();
        map.insert(value);
        self.states = States(Some(std::sync::Arc::new(map)));
        self
    }
}

/// The values a completion function proposes.
///
/// ```
/// use mcp_runtime::mcp::Completion;
/// let c = Completion::from(vec!["flask".to_string(), "fastapi".to_string()]);
/// assert_eq!(c.values.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, best first (at most 100 are sent, the specification's cap).
    pub values: Vec<String>,
    /// How many values exist in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more exist than were sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// Capped at 100 values (the specification's cap): the values past the cap are dropped,
    /// `total` and `hasMore` say so.
    pub(crate) fn capped(mut self) -> Self {
        if self.values.len() > MAX_COMPLETION_VALUES {
            let all = self.values.len() as u64;
            self.values.truncate(MAX_COMPLETION_VALUES);
            self.total = Some(self.total.unwrap_or(all).max(all));
            self.has_more = Some(true);
        }
        self
    }
}

impl From<Vec<String>> for Completion {
    fn from(values: Vec<String>) -> Self {
        Completion {
            values,
            total: None,
            has_more: None,
        }
    }
}

impl From<Vec<&str>> for Completion {
    fn from(values: Vec<&str>) -> Self {
        values
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
            .into()
    }
}

/// What a completion function may return: a [`Completion`], a list of strings, or either in a
/// `Result`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a completion function",
    note = "return `Vec<String>`, `Vec<&str>`, `Completion`, or one of them in `Result<_, RpcError>`"
)]
pub trait IntoCompletion {
    /// The completion, or the error to answer with.
    fn into_completion(self) -> Result<Completion, RpcError>;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, RpcError> {
        Ok(self)
    }
}
impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, RpcError> {
        Ok(self.into())
    }
}
impl IntoCompletion for Vec<&str> {
    fn into_completion(self) -> Result<Completion, RpcError> {
        Ok(self.into())
    }
}
impl<T: IntoCompletion, E: Into<RpcError>> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<Completion, RpcError> {
        self.map_err(Into::into)?.into_completion()
    }
}

/// What a completion function may take after its request, as a method takes context
/// parameters: the server's shared state, [`State<T>`](crate::State).
pub trait FromCompletion: Sized + Send + 'static {
    /// Takes it from the request; a state the server was not built with is an internal error
    /// (-32603, naming the type).
    fn from_completion(req: &CompletionRequest) -> Result<Self, RpcError>;
}

impl<T: Send + Sync + 'static> FromCompletion for crate::context::State<T> {
    fn from_completion(req: &CompletionRequest) -> Result<Self, RpcError> {
        req.state::<T>()
            .map(crate::context::State)
            .ok_or_else(crate::context::missing_state::<T>)
    }
}

/// A function `#[complete(with = f)]` may name: `fn(&CompletionRequest) -> R` or
/// `async fn(CompletionRequest) -> R`, where `R` is [`IntoCompletion`]; either may take one
/// [`FromCompletion`] parameter more (`State<Db>`), as a method takes its state:
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::mcp::CompletionRequest;
///
/// struct Notes(Vec<String>);
///
/// fn titles(req: &CompletionRequest, notes: State<Notes>) -> Vec<String> {
///     let Notes(titles) = &*notes;
///     titles.iter().filter(|t| t.starts_with(&req.value)).cloned().collect()
/// }
/// ```
///
/// `M` only tells the forms apart (as axum's handlers do).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a completion function",
    note = "a completion function is `fn(&CompletionRequest) -> Vec<String>` or `async fn(CompletionRequest) -> Vec<String>` (or `Completion`, or either in a `Result`), optionally with a `State<T>` parameter after the request"
)]
pub trait Completer<M>: Copy + Send + Sync + 'static {
    /// Runs it.
    fn complete(self, req: CompletionRequest) -> BoxFuture<'static, Result<Completion, RpcError>>;
}

#[doc(hidden)]
pub struct SyncCompleter;
#[doc(hidden)]
pub struct AsyncCompleter;

impl<F, R> Completer<(SyncCompleter, R)> for F
where
    F: Fn(&CompletionRequest) -> R + Copy + Send + Sync + 'static,
    R: IntoCompletion,
{
    fn complete(self, req: CompletionRequest) -> BoxFuture<'static, Result<Completion, RpcError>> {
        Box::pin(std::future::ready(self(&req).into_completion()))
    }
}

impl<F, A, R> Completer<(SyncCompleter, A, R)> for F
where
    F: Fn(&CompletionRequest, A) -> R + Copy + Send + Sync + 'static,
    A: FromCompletion,
    R: IntoCompletion,
{
    fn complete(self, req: CompletionRequest) -> BoxFuture<'static, Result<Completion, RpcError>> {
        let out = A::from_completion(&req).and_then(|a| self(&req, a).into_completion());
        Box::pin(std::future::ready(out))
    }
}

impl<F, A, Fut> Completer<(AsyncCompleter, A, Fut)> for F
where
    F: Fn(CompletionRequest, A) -> Fut + Copy + Send + Sync + 'static,
    A: FromCompletion,
    Fut: Future + Send + 'static,
    Fut::Output: IntoCompletion,
{
    fn complete(self, req: CompletionRequest) -> BoxFuture<'static, Result<Completion, RpcError>> {
        match A::from_completion(&req) {
            Ok(a) => Box::pin(async move { self(req, a).await.into_completion() }),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}

impl<F, Fut> Completer<(AsyncCompleter, Fut)> for F
where
    F: Fn(CompletionRequest) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoCompletion,
{
    fn complete(self, req: CompletionRequest) -> BoxFuture<'static, Result<Completion, RpcError>> {
        Box::pin(async move { self(req).await.into_completion() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn colors(req: &CompletionRequest) -> Vec<&'static str> {
        ["red", "green", "blue"]
            .into_iter()
            .filter(|c| c.starts_with(req.value.as_str()))
            .collect()
    }

    async fn numbers(_: CompletionRequest) -> Result<Vec<String>, RpcError> {
        Ok((0..250).map(|i| i.to_string()).collect())
    }

    fn run<M>(f: impl Completer<M>, value: &str) -> Completion {
        let req = CompletionRequest {
            argument: "a".into(),
            value: value.into(),
            ..CompletionRequest::default()
        };
        futures_util::FutureExt::now_or_never(f.complete(req))
            .expect("ready")
            .expect("ok")
            .capped()
    }

    #[test]
    fn sync_and_async_functions_complete_and_the_values_are_capped() {
        assert_eq!(run(colors, "gr").values, ["green"]);
        let many = run(numbers, "");
        assert_eq!(many.values.len(), MAX_COMPLETION_VALUES);
        assert_eq!((many.total, many.has_more), (Some(250), Some(true)));
    }
}
