"""Drives benchgym's /openenv with openenv-core's own clients (GenericEnvClient, MCPToolClient).

    python openenv_clients.py BASE_URL GOLD_JSON SESSIONS

BASE_URL is what an OpenEnv user passes (http://HOST:PORT/openenv); GOLD_JSON holds the gold
files of examples/roman-numerals. Prints one JSON object with what each client saw.
"""

import asyncio
import json
import sys
import time

from openenv.cli._validation import validate_running_environment
from openenv.core import GenericEnvClient, MCPToolClient
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation, ListToolsAction

BASE, GOLD_PATH, SESSIONS = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(GOLD_PATH) as f:
    GOLD = json.load(f)
TASK = "roman-numerals"


def generic_gold_sync():
    """The synchronous wrapper, as training loops use it: reset, look, write the gold files, submit."""
    out = {}
    with GenericEnvClient(base_url=BASE).sync() as env:
        r = env.reset(task_id=TASK, episode_id="gold-run")
        out["reset"] = {"reward": r.reward, "done": r.done, "keys": sorted(r.observation), "task_id": r.observation["metadata"]["task_id"]}
        tools = env.step({"type": "list_tools"})
        out["tools"] = [t["name"] for t in tools.observation["tools"]]
        viewed = env.step({"type": "call_tool", "tool_name": "view_file", "arguments": {"path": "roman.py"}})
        out["view"] = {"reward": viewed.reward, "done": viewed.done, "path": viewed.observation["result"]["data"]["path"]}
        for path, content in GOLD.items():
            written = env.step({"tool_name": "create_file", "arguments": {"path": path, "content": content, "overwrite": True}})
            assert written.observation["error"] is None, written.observation["error"]
        submitted = env.step({"type": "call_tool", "tool_name": "submit"})
        out["submit"] = {"reward": submitted.reward, "done": submitted.done, "status": submitted.observation["result"]["data"]["status"]}
        out["state"] = env.state()
    return out


async def generic_empty_and_bad():
    """Submitting the untouched workspace scores 0; a malformed action is OpenEnv's error, and the session goes on."""
    out = {}
    async with GenericEnvClient(base_url=BASE) as env:
        await env.reset(task_id=TASK)
        try:
            await env.step({"type": "bogus"})
            out["bad_action"] = None
        except RuntimeError as e:
            out["bad_action"] = str(e)
        missing = await env.step({"tool_name": "view_file", "arguments": {"path": "missing.py"}})
        out["tool_error"] = missing.observation["error"]
        submitted = await env.step({"tool_name": "submit"})
        out["submit"] = {"reward": submitted.reward, "done": submitted.done, "status": submitted.observation["result"]["data"]["status"]}
        out["episode_id"] = (await env.state())["episode_id"]
    return out


async def mcp_tool_client():
    """MCPToolClient: list_tools and call_tool over the session, the verdict's reward on a submit step."""
    out = {}
    async with MCPToolClient(base_url=BASE) as env:
        before = await env.list_tools(use_cache=False)
        out["tools_before_reset"] = [t.name for t in before]
        r = await env.reset(task_id=TASK)
        out["reset_metadata_task"] = r.observation.metadata.get("task_id")
        tools = await env.list_tools(use_cache=False)
        out["tools"] = [t.name for t in tools]
        out["submit_schema_type"] = next(t.input_schema.get("type") for t in tools if t.name == "submit")
        data = await env.call_tool("view_file", path="roman.py")
        out["view_path"] = data["path"]
        try:
            await env.call_tool("view_file", path="missing.py")
            out["tool_error"] = None
        except RuntimeError as e:
            out["tool_error"] = str(e)
        for path, content in GOLD.items():
            await env.call_tool("create_file", path=path, content=content, overwrite=True)
        step = await env.step(CallToolAction(tool_name="submit"))
        out["submit"] = {"reward": step.reward, "done": step.done, "is_call_observation": isinstance(step.observation, CallToolObservation)}
        listed = await env.step(ListToolsAction())
        out["done_after"] = listed.done
        out["state_step_count"] = (await env.state()).step_count
    return out


async def abandoned():
    """A session that resets and closes without submitting: the server ends its episode."""
    async with GenericEnvClient(base_url=BASE) as env:
        r = await env.reset(task_id=TASK)
        return r.observation["metadata"]["episode_id"]


async def concurrent(n):
    """n sessions at once, each its own episode: even ones submit the gold solution, odd ones nothing."""

    async def one(i):
        async with GenericEnvClient(base_url=BASE, message_timeout_s=600) as env:
            r = await env.reset(task_id=TASK, episode_id=f"session-{i}")
            if i % 2 == 0:
                for path, content in GOLD.items():
                    await env.step({"tool_name": "create_file", "arguments": {"path": path, "content": content, "overwrite": True}})
            submitted = await env.step({"tool_name": "submit"})
            state = await env.state()
            return {"i": i, "episode_id": r.observation["metadata"]["episode_id"], "label": state.get("label"), "reward": submitted.reward, "done": submitted.done}

    started = time.monotonic()
    results = await asyncio.gather(*(one(i) for i in range(n)))
    return {"results": results, "seconds": round(time.monotonic() - started, 1)}


def main():
    out = {"generic_gold": generic_gold_sync()}
    out.update(asyncio.run(run_async()))
    out["validate"] = validate_running_environment(BASE, timeout_s=30)
    print(json.dumps(out))


async def run_async():
    return {
        "generic_empty": await generic_empty_and_bad(),
        "mcp_tool_client": await mcp_tool_client(),
        "abandoned": await abandoned(),
        "concurrent": await concurrent(SESSIONS),
    }


if __name__ == "__main__":
    main()
