//! `Jobs.*`: long work that reports progress.

use std::time::Duration;

use mcp_runtime::prelude::*;
use serde::Serialize;

use crate::MCP;

/// The outcome of a job.
#[derive(Debug, Serialize, JsonSchema)]
pub struct JobReport {
    /// Steps done.
    pub steps: u32,
    /// Which run finished it, when not the first: with Redis, a task whose instance stopped is
    /// run again, from its start, by another.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

/// Run a slow job, reporting progress after each step.
///
/// Over MCP the client sees `notifications/progress` (when it sends a progress token); a client
/// that accepts tasks gets a task to poll. Over JSON-RPC, `$rpc.callback` runs it in the
/// background and POSTs the answer there.
#[rpc_method(name = "Jobs.run", groups = [MCP])]
#[mcp_tool(read_only_hint = true, task = "optional")]
pub async fn run(
    /// How many steps
    #[param(default = 3)]
    steps: u32,
    /// Milliseconds per step
    #[param(default = 100)]
    step_ms: u64,
    /// Ask the user to confirm before the last step
    #[param(default = false)]
    confirm: bool,
    ctx: RequestContext,
) -> Result<JobReport, RpcError> {
    if steps > 100 || step_ms > 5_000 {
        return Err(RpcError::invalid_params(
            "at most 100 steps of at most 5000 ms",
        ));
    }
    let attempt = (ctx.attempt() > 1).then(|| ctx.attempt());
    for i in 1..=steps {
        // With Redis, a run taken over by another instance asks again and is given the
        // client's earlier answer: the user is not asked twice.
        if confirm
            && i == steps
            && !ctx
                .confirm(format!("Finish the job (step {i} of {steps})?"))
                .await?
        {
            return Ok(JobReport {
                steps: i - 1,
                attempt,
            });
        }
        tokio::time::sleep(Duration::from_millis(step_ms)).await;
        ctx.report_progress(
            f64::from(i),
            Some(f64::from(steps)),
            Some(&format!("step {i} of {steps}")),
        );
    }
    Ok(JobReport { steps, attempt })
}

/// Run a job that must not run twice (a payment, a message sent), reporting progress.
///
/// As `Jobs.run`, but with Redis a task of it whose instance stops is not run again by
/// another: it ends `failed`, and the caller decides what to do.
#[rpc_method(name = "Jobs.once", groups = [MCP])]
#[mcp_tool(task = "optional", retry = false)]
pub async fn once(
    /// How many steps
    #[param(default = 3)]
    steps: u32,
    /// Milliseconds per step
    #[param(default = 100)]
    step_ms: u64,
    ctx: RequestContext,
) -> Result<JobReport, RpcError> {
    run(steps, step_ms, false, ctx).await
}
