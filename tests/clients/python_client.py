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
from mcp.types import PromptReference, ResourceTemplateReference

HANDSHAKE = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
UI_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME = "text/html;profile=mcp-app"
CONTENT_LANGUAGE = "io.modelcontextprotocol/contentLanguage"


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

        # Resources, templates, prompts and completions.
        resources = (await c.list_resources()).resources
        check(
            [str(r.uri) for r in resources]
            == ["catalog://hours", "skill://catalog/shopping/SKILL.md", "ui://catalog/product-card"],
            f"resources: {resources}",
        )
        check(resources[0].mime_type == "text/plain" and resources[0].name == "hours", "hours resource")
        # The MCP App (the io.modelcontextprotocol/ui extension): its page, and the tool linked to it.
        app = resources[2]
        check(app.name == "product-card" and app.mime_type == APP_MIME, f"app resource: {app}")
        check(app.meta == {"ui": {"prefersBorder": True}}, f"app resource _meta: {app.meta}")
        r = await c.read_resource("ui://catalog/product-card")
        page = r.contents[0]
        check(page.mime_type == APP_MIME and page.text.startswith("<!DOCTYPE html>"), f"app page: {page}")
        check(page.meta == {"ui": {"prefersBorder": True}}, f"app page _meta: {page.meta}")
        get = next(t for t in tools if t.name == "Catalog.get")
        check(get.meta == {"ui": {"resourceUri": "ui://catalog/product-card"}}, f"Catalog.get _meta: {get.meta}")
        extensions = c.server_capabilities.extensions or {}
        check(extensions.get(UI_EXTENSION) == {"mimeTypes": [APP_MIME]}, f"extensions: {extensions}")
        seen["app"] = {"uri": str(app.uri), "mime_type": page.mime_type, "tool": get.meta["ui"]["resourceUri"]}
        # The language of each request (SEP-2792), in `_meta`, over HTTP and stdio alike.
        asked = {"io.modelcontextprotocol/acceptLanguage": "uk-UA, en;q=0.5"}
        r = await c.read_resource("ui://catalog/product-card", meta=asked)
        check('<html lang="uk">' in r.contents[0].text, "the app page in Ukrainian")
        check((r.meta or {}).get(CONTENT_LANGUAGE) == "uk", f"the read names its language: {r.meta}")
        r = await c.call_tool("Catalog.ping", {"who": "Olena"}, meta={"io.modelcontextprotocol/acceptLanguage": "en"})
        check((r.meta or {}).get(CONTENT_LANGUAGE) == "en", f"the call names its language: {r.meta}")
        r = await c.read_resource("ui://catalog/product-card")
        check('<html lang="en">' in r.contents[0].text and CONTENT_LANGUAGE not in (r.meta or {}), "no carrier")
        seen["languages"] = ["uk", "en"]
        templates = (await c.list_resource_templates()).resource_templates
        check([t.uri_template for t in templates] == ["catalog://products/{id}"], f"templates: {templates}")
        r = await c.read_resource("catalog://hours")
        check(r.contents[0].text.startswith("Monday to Friday"), f"hours: {r.contents}")
        r = await c.read_resource("catalog://products/2")
        check(json.loads(r.contents[0].text) == {"id": 2, "name": "Blue mug"}, f"product 2: {r.contents}")
        check(r.contents[0].mime_type == "application/json", "product mime type")
        missing = -32602 if version == "2026-07-28" else -32002
        seen["resource_not_found"] = await expect_mcp_error(c.read_resource("catalog://products/99"), missing)
        prompts = (await c.list_prompts()).prompts
        check([p.name for p in prompts] == ["recommend"], f"prompts: {prompts}")
        check([(a.name, a.required) for a in prompts[0].arguments] == [("need", True), ("count", False)], "arguments")
        r = await c.get_prompt("recommend", {"need": "tea", "count": "2"})
        text = r.messages[0].content.text
        check(r.messages[0].role == "user" and "at most 2 products" in text, f"prompt: {r.messages}")
        seen["prompt_missing_argument"] = await expect_mcp_error(c.get_prompt("recommend", {}), -32602)
        done = await c.complete(PromptReference(type="ref/prompt", name="recommend"), {"name": "need", "value": "a "})
        check(done.completion.values == ["a gift", "a mug for tea", "a teapot"], f"completion: {done.completion}")
        done = await c.complete(
            ResourceTemplateReference(type="ref/resource", uri="catalog://products/{id}"), {"name": "id", "value": "1"}
        )
        check(done.completion.values == ["1"], f"template completion: {done.completion}")
        seen["resources"] = [str(r.uri) for r in resources]
        seen["prompts"] = [p.name for p in prompts]
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
