"""Drives the example `catalog` service with the official Python MCP SDK (mcp 2.3.0).

usage: python_client.py MODE TARGET...
  MODE    auto | legacy
  TARGET  an http:// URL, or `stdio` followed by the server command and its arguments

Prints one JSON line with what was observed; exits non-zero on the first failed check.
"""

import json
import sys

import anyio
from mcp import Client, MCPError, StdioServerParameters

HANDSHAKE = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def expect_mcp_error(coro, code):
    try:
        await coro
    except MCPError as e:
        check(e.error.code == code, f"expected error {code}, got {e.error.code}: {e.error.message}")
        return e.error.message
    raise AssertionError(f"expected MCPError {code}, got a result")


async def run(mode, target):
    seen = {}
    async with Client(target, mode=mode) as c:
        version = c.protocol_version
        seen["protocol_version"] = version
        if mode == "auto":
            check(version == "2026-07-28", f"auto mode negotiated {version}")
        else:
            check(version in HANDSHAKE, f"legacy mode negotiated {version}")

        tools = (await c.list_tools()).tools
        names = [t.name for t in tools]
        seen["tools"] = names
        check(names == sorted(names), "tools/list order is not sorted")
        for n in ["Catalog.get", "Catalog.ping", "Catalog.search", "Catalog.tree", "Jobs.run"]:
            check(n in names, f"missing tool {n}")
        check(not any(":" in n for n in names), "a JSON-RPC-only method leaked into the MCP group")
        ping = next(t for t in tools if t.name == "Catalog.ping")
        schema = dict(ping.input_schema)
        schema.pop("$schema", None)
        check(
            schema
            == {
                "type": "object",
                "properties": {"who": {"type": "string", "description": "Who is pinging", "default": "x"}},
                "additionalProperties": False,
            },
            f"ping inputSchema: {ping.input_schema}",
        )
        search = next(t for t in tools if t.name == "Catalog.search")
        check(search.annotations.read_only_hint is True and search.annotations.idempotent_hint is True, "annotations")
        check(search.annotations.destructive_hint is None, "unset hints must be left out")

        # The client validates structuredContent against outputSchema on every call below.
        r = await c.call_tool("Catalog.search", {"query": "mug", "limit": 2})
        check(not r.is_error, f"search failed: {r.content}")
        check(
            r.structured_content == {"result": [{"id": 5, "name": "Mug rack"}, {"id": 1, "name": "Red mug"}]},
            f"search structuredContent: {r.structured_content}",
        )
        check(json.loads(r.content[0].text) == r.structured_content["result"], "text content is the result JSON")
        r = await c.call_tool("Catalog.ping", {})
        check(r.structured_content == {"result": "pong, x"}, f"ping: {r.structured_content}")
        r = await c.call_tool("Catalog.tree", {})
        check(not r.is_error and r.structured_content["result"]["name"] == "All", "tree")
        r = await c.call_tool("Catalog.get", {"id": 99})
        check(r.is_error, "unknown product must be a tool error")
        err = json.loads(r.content[0].text)
        check(err["code"] == -32404 and err["message"] == "Product 99 not found", f"get error: {err}")
        check(r.structured_content is None, "an error has no structuredContent")
        seen["invalid_arguments"] = await expect_mcp_error(c.call_tool("Catalog.search", {"limit": "x"}), -32602)
        seen["unknown_argument"] = await expect_mcp_error(c.call_tool("Catalog.ping", {"nope": 1}), -32602)
        seen["unknown_tool"] = await expect_mcp_error(c.call_tool("Nope.nothing", {}), -32602)

        progress = []

        async def on_progress(p, total, message):
            progress.append([p, total, message])

        r = await c.call_tool("Jobs.run", {"steps": 3, "step_ms": 10}, progress_callback=on_progress)
        check(r.structured_content == {"result": {"steps": 3}}, f"job: {r.structured_content}")
        seen["progress"] = progress
        check([p[0] for p in progress] == [1, 2, 3], f"progress notifications: {progress}")
    print(json.dumps(seen))


def main():
    mode, target = sys.argv[1], sys.argv[2:]
    if target[0] == "stdio":
        server = StdioServerParameters(command=target[1], args=target[2:])
    else:
        server = target[0]
    anyio.run(run, mode, server)


if __name__ == "__main__":
    main()
