//! The pipeline: look up → prepare params → validate → convert → call (panics caught).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::Value;

use crate::catalog::{Catalog, MethodInfo};
use crate::context::{CallExtras, Face, RequestContext, StateMap};
use crate::env::Environment;
use crate::error::RpcError;
use crate::output::Output;
use crate::registry::Handler;

/// One call, as both faces hand it to the core.
#[derive(Debug)]
pub struct CallRequest<'a> {
    /// The catalog of the endpoint (group and version).
    pub catalog: &'a Catalog,
    /// The method (or tool) name.
    pub method: &'a str,
    /// The params (object or list), if any.
    pub params: Option<Value>,
    /// The face it came through.
    pub face: Face,
    /// Progress token and notifier, from the transport.
    pub extras: CallExtras,
}

/// The core: environment and state shared by every call.
#[derive(Debug, Clone)]
pub struct Core {
    env: Environment,
    state: Arc<StateMap>,
}

impl Core {
    /// A core with an environment and the shared state.
    pub fn new(env: Environment, state: Arc<StateMap>) -> Self {
        Self { env, state }
    }

    /// The environment.
    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// Runs one call through the pipeline.
    pub async fn call(&self, req: CallRequest<'_>) -> Result<Output, RpcError> {
        let info = req.catalog.get(req.method).ok_or_else(|| {
            RpcError::method_not_found(format!(
                "Method \"{}\" for version \"v{}\" is not found in group \"{}\"",
                req.method,
                req.catalog.version(),
                req.catalog.group().name()
            ))
        })?;
        self.call_method(req.catalog, info, req.params, req.face, req.extras)
            .await
    }

    /// Runs a call of a method already looked up.
    pub async fn call_method(
        &self,
        catalog: &Catalog,
        info: &MethodInfo,
        params: Option<Value>,
        face: Face,
        extras: CallExtras,
    ) -> Result<Output, RpcError> {
        let params = super::params::prepare(info, params)?;
        let params = Value::Object(params);
        super::validate::check(info, &params)?;
        let Value::Object(params) = params else {
            unreachable!("prepared params are an object")
        };
        let ctx = RequestContext::new(
            info.def.name,
            catalog.group().name(),
            catalog.version(),
            face,
            self.env.clone(),
            self.state.clone(),
            extras,
        );
        invoke(info.def.handler, ctx, params, &self.env).await
    }
}

/// Calls the handler; a panic becomes -32603 and the worker keeps serving.
async fn invoke(
    handler: Handler,
    ctx: RequestContext,
    params: crate::registry::Params,
    env: &Environment,
) -> Result<Output, RpcError> {
    match handler {
        Handler::Sync(f) => std::panic::catch_unwind(AssertUnwindSafe(|| f(ctx, params)))
            .unwrap_or_else(|p| Err(RpcError::from_panic(p, env))),
        Handler::Async(f) => match std::panic::catch_unwind(AssertUnwindSafe(|| f(ctx, params))) {
            Ok(fut) => AssertUnwindSafe(fut)
                .catch_unwind()
                .await
                .unwrap_or_else(|p| Err(RpcError::from_panic(p, env))),
            Err(p) => Err(RpcError::from_panic(p, env)),
        },
    }
}
