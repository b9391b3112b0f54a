"""Drives the example's task tool with the official Python MCP SDK (mcp 2.3.0) and its client
extension API: an `io.modelcontextprotocol/tasks` extension claims the `task` result of
`tools/call`, polls `tasks/get` (with `Mcp-Name: <taskId>`) until the task is terminal and
hands back the inlined `CallToolResult`, so `call_tool` returns the job's result.

usage: python_tasks.py MODE URL [takeover]
  MODE      auto (the extension is a 2026-07-28 one)
  takeover  a longer job (3 s), polled for up to a minute: the test kills the instance that
            runs it, and the client sees it go on and complete elsewhere; prints the statuses
            it saw (each change once) and the result

Prints one JSON line with what was observed; exits non-zero on the first failed check.
"""

import json
import sys
import time
from typing import Any, Literal

import anyio
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.types import CallToolResult
from mcp_types import Request, RequestParams, Result
from pydantic import ConfigDict

EXTENSION = "io.modelcontextprotocol/tasks"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


class CreateTaskResult(Result):
    """The flat `resultType: "task"` answer of a call that became a task."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(Result):
    """`tasks/get`: the task, with its result once completed."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    task_id: str
    status: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskIdParams(RequestParams):
    task_id: str


class GetTask(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class Tasks(ClientExtension):
    identifier = EXTENSION

    def __init__(self, seen, patience=10.0):
        self.seen = seen
        self.patience = patience

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        self.seen["created"] = {"status": created.status, "tool": ctx.tool_name}
        check(created.poll_interval_ms is not None, "no pollIntervalMs")
        polls = 0
        statuses = []
        deadline = time.monotonic() + self.patience
        while True:
            polls += 1
            check(time.monotonic() < deadline, "the task never ended")
            task = await ctx.session.send_request(
                GetTask(params=TaskIdParams(task_id=created.task_id)), DetailedTask
            )
            check(task.task_id == created.task_id, f"another task: {task.task_id}")
            if not statuses or statuses[-1] != task.status:
                statuses.append(task.status)
            if task.status in ("completed", "failed", "cancelled"):
                break
            check(task.status == "working", f"unexpected status {task.status}")
            await anyio.sleep(0.05)
        self.seen["statuses"] = statuses
        self.seen["final_status"] = task.status
        self.seen["polled"] = polls > 1
        check(task.status == "completed", f"task ended {task.status}: {task.error}")
        return CallToolResult.model_validate(task.result)


async def takeover(mode, url):
    seen = {}
    async with Client(url, mode=mode, extensions=[Tasks(seen, patience=60.0)]) as c:
        seen["protocol_version"] = c.protocol_version
        r = await c.call_tool("Jobs.run", {"steps": 30, "step_ms": 100})
        check(not r.is_error, f"Jobs.run failed: {r.content}")
        seen["result"] = r.structured_content
    print(json.dumps(seen, sort_keys=True))


async def run(mode, url):
    seen = {}
    progress = []

    async def on_progress(done, total, message):
        progress.append(done)

    async with Client(url, mode=mode, extensions=[Tasks(seen)]) as c:
        seen["protocol_version"] = c.protocol_version
        r = await c.call_tool(
            "Jobs.run", {"steps": 4, "step_ms": 60}, progress_callback=on_progress
        )
        check(not r.is_error, f"Jobs.run failed: {r.content}")
        seen["result"] = r.structured_content
        # A short call still answers directly, without a task.
        r = await c.call_tool("Catalog.ping", {"who": "task"})
        seen["ping"] = r.structured_content["result"]
    print(json.dumps(seen, sort_keys=True))


if __name__ == "__main__":
    if sys.argv[3:] == ["takeover"]:
        anyio.run(takeover, sys.argv[1], sys.argv[2])
    else:
        anyio.run(run, sys.argv[1], sys.argv[2])
