"""An MCP client for vx's tests: the official Python SDK (PyPI `mcp`)
driving `vx mcp` over stdio, as an agent's host would.

Reads a script from the file named by its argument, JSON: {"command": [...], "cwd": "...", "steps":
[...]}, where each step is {"tools": true}, {"resources": true},
{"read": URI} or {"call": NAME, "args": {...}}. Prints one JSON line per
step: the tool names, the resource URIs, the resource's text, or the
call's {"is_error", "structured", "text"}; a step the SDK refuses prints
{"protocol_error": MESSAGE}. The test that runs it asserts on the lines.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def step(session, s):
    if s.get("tools"):
        listed = await session.list_tools()
        return {"tools": sorted(t.name for t in listed.tools)}
    if s.get("resources"):
        listed = await session.list_resources()
        return {"resources": [r.uri for r in listed.resources]}
    if "read" in s:
        read = await session.read_resource(s["read"])
        return {"text": read.contents[0].text}
    result = await session.call_tool(s["call"], s.get("args", {}))
    text = "".join(c.text for c in result.content if getattr(c, "text", None) is not None)
    return {"is_error": bool(result.is_error), "structured": result.structured_content, "text": text}


async def main():
    with open(sys.argv[1]) as f:
        script = json.load(f)
    # The test's environment whole (the SDK would pass a few variables only).
    params = StdioServerParameters(
        command=script["command"][0], args=script["command"][1:], cwd=script["cwd"], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(json.dumps({"server": init.server_info.name, "instructions": init.instructions}), flush=True)
            for s in script["steps"]:
                try:
                    out = await step(session, s)
                except Exception as e:  # the SDK's error for a protocol-level failure
                    out = {"protocol_error": str(e)}
                print(json.dumps(out), flush=True)


anyio.run(main)
