"""A Python MCP SDK client (the `mcp` package) against a benchgym URL: long-call timeouts and progress.

Prints one JSON line with what it saw. Written for mcp >= 1.9 (timeouts as timedelta) and
mcp 2.x (timeouts in seconds).
"""
import asyncio
import json
import sys
from datetime import timedelta
from importlib.metadata import version

from mcp import ClientSession

MAJOR = int(version("mcp").split(".")[0])


def seconds(s: float):
    return timedelta(seconds=s) if MAJOR < 2 else float(s)


def structured(result):
    return getattr(result, "structured_content", None) if MAJOR >= 2 else result.structuredContent


def is_error(result):
    return bool(getattr(result, "is_error", None) if MAJOR >= 2 else result.isError)


def transport(url: str):
    if MAJOR < 2:
        from mcp.client.streamable_http import streamablehttp_client
        return streamablehttp_client(url)
    from mcp.client.streamable_http import streamable_http_client
    return streamable_http_client(url)


async def main(url: str) -> None:
    out: dict = {"mcp": version("mcp")}
    async with transport(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, read_timeout_seconds=seconds(120)) as session:
            await session.initialize()
            notes = []

            async def on_progress(progress, total, message):
                notes.append({"progress": progress, "total": total, "message": message})

            started = await session.call_tool("start_episode", {"task_id": "roman-numerals"}, read_timeout_seconds=seconds(1800), progress_callback=on_progress)
            episode_id = structured(started)["episodeId"]
            out["start_progress"] = notes
            beats = []

            async def on_beat(progress, total, message):
                beats.append({"progress": progress, "total": total, "message": message})

            slow = await session.call_tool("run_command", {"episode_id": episode_id, "command": "sleep 6; echo slept"}, read_timeout_seconds=seconds(60), progress_callback=on_beat)
            out["slow_ok"] = not is_error(slow)
            out["slow_beats"] = beats
            try:
                await session.call_tool("run_command", {"episode_id": episode_id, "command": "sleep 4"}, read_timeout_seconds=seconds(1))
                out["timeout"] = None
            except Exception as e:  # the SDK's error for a request past its time limit
                out["timeout"] = f"{type(e).__name__}: {e}"
            bad = await session.call_tool("view_file", {"episode_id": episode_id, "path": 42})
            out["bad_argument"] = {"isError": is_error(bad), "structuredContent": structured(bad)}
            unknown = await session.call_tool("no_such_tool", {})
            out["unknown_tool"] = {"isError": is_error(unknown), "structuredContent": structured(unknown)}
            await asyncio.sleep(4)
            await session.call_tool("end_episode", {"episode_id": episode_id})
    print(json.dumps(out))


asyncio.run(main(sys.argv[1]))
