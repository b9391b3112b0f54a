"""Completes the example's asking methods with the official Python MCP SDK (mcp 2.3.0): an
elicitation callback confirms (or declines) `Orders.pay`, a sampling callback writes
`Catalog.pitch`'s sentence.

usage: python_ask.py MODE TARGET...
  MODE    auto | legacy
  TARGET  an http:// URL, or `stdio` followed by the server command and its arguments

Prints one JSON line with what was observed; exits non-zero on the first failed check.
"""

import json
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import CreateMessageResult, ElicitResult, TextContent


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def run(mode, target):
    seen = {"elicitations": [], "samplings": []}
    answers = []

    async def on_elicit(context, params):
        seen["elicitations"].append({"message": params.message, "requestedSchema": params.requested_schema})
        return answers.pop(0)

    async def on_sample(context, params):
        seen["samplings"].append(
            {
                "text": params.messages[0].content.text,
                "systemPrompt": params.system_prompt,
                "maxTokens": params.max_tokens,
            }
        )
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="The teapot your tea deserves."),
            model="test-model",
            stop_reason="endTurn",
        )

    async with Client(target, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample) as c:
        seen["protocol_version"] = c.protocol_version

        answers.append(ElicitResult(action="accept", content={"confirm": True}))
        r = await c.call_tool("Orders.pay", {"order_id": 7})
        check(not r.is_error, f"pay failed: {r.content}")
        seen["accepted"] = r.structured_content["result"]

        answers.append(ElicitResult(action="decline"))
        r = await c.call_tool("Orders.pay", {"order_id": 8})
        check(not r.is_error, f"pay failed: {r.content}")
        seen["declined"] = r.structured_content["result"]

        r = await c.call_tool("Catalog.pitch", {"id": 3})
        check(not r.is_error, f"pitch failed: {r.content}")
        seen["pitch"] = r.structured_content["result"]
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
