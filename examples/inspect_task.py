"""benchgym tasks as an inspect_ai eval, over MCP (docs/PROTOCOL.md, "inspect_ai").

    pip install inspect_ai mcp
    node bin/benchgym.js serve                                   # in one terminal
    inspect eval examples/inspect_task.py --model openai/gpt-4o  # any inspect model
    python3 examples/inspect_task.py                             # offline: a scripted mock model

Each sample is one benchgym task. The solver opens a session on benchgym's /openenv/mcp (OpenEnv's
JSON-RPC over plain HTTP), starts the sample's episode in it, and points inspect's MCP tool source
at the episode's own endpoint (/episodes/<id>/<key>/mcp): the model sees that episode's tools and
nothing else. The scorer submits the final state if the model did not, scores the verdict's reward
(hidden tests, as the benchmark scores), and closes the session, which ends the episode.
Task options (-T): url (default http://127.0.0.1:7420), suite (default examples), tasks (comma-separated ids;
default: the whole suite), token (a server with --token; else $BENCHGYM_TOKEN).
"""

import json
import os
import re
import sys
import urllib.request

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import mcp_server_http, mcp_tools


def rpc(url, token, method, **params):
    """One JSON-RPC call on benchgym's /openenv/mcp (plain HTTP: no client library)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    with urllib.request.urlopen(urllib.request.Request(f"{url}/openenv/mcp", body, headers), timeout=1800) as r:
        answer = json.load(r)
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']['message']}")
    return answer["result"]


@solver
def benchgym_episode(url, token):
    """Starts the sample's episode and gives the model its tools (and only them)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        session = rpc(url, token, "openenv/session/create")["session_id"]
        arguments = {"task_id": state.metadata["task_id"], "suite": state.metadata["suite"]}
        started = rpc(url, token, "tools/call", name="start_episode", arguments=arguments, session_id=session)["data"]
        state.metadata.update(session=session, episode_id=started["episodeId"])
        episode_url = f"{url}{started['mcpPath']}"
        server = mcp_server_http(name=f"benchgym-{started['episodeId']}", url=episode_url)
        return await use_tools(mcp_tools(server))(state, generate)

    return solve


@scorer(metrics=[accuracy()])
def verdict(url, token):
    """The verdict's reward; a model that stopped without submit has its final state submitted."""

    async def score(state: TaskState, target: Target) -> Score:
        session = state.metadata["session"]
        try:
            submitted = (m.text for m in state.messages if m.role == "tool" and m.function == "submit" and not m.error)
            text = next(submitted, None)
            if text is None:
                answer = rpc(url, token, "tools/call", name="submit", arguments={}, session_id=session)
                text = answer["content"][0]["text"]
        finally:
            rpc(url, token, "openenv/session/close", session_id=session)
        found = re.search(r"\(reward ([01])\)", text)
        value = int(found.group(1)) if found else 0
        return Score(value=value, explanation=text, metadata={"episode_id": state.metadata["episode_id"]})

    return score


@task
def benchgym(url="http://127.0.0.1:7420", suite="examples", tasks="", token=""):
    token = token or os.environ.get("BENCHGYM_TOKEN", "")
    # inspect's -T tasks=a,b arrives as a list; tasks="a,b" from Python as a string.
    ids = [t for t in (tasks.split(",") if isinstance(tasks, str) else tasks) if t]
    if not ids:
        listed = rpc(url, token, "tools/call", name="list_tasks", arguments={"suite": suite, "limit": 1000})
        ids = [t["id"] for t in listed["data"]["tasks"]]
    dataset = [
        Sample(
            id=task_id,
            input=f"Solve the benchgym task {suite}/{task_id}: its statement is in the tools' workspace and in start_episode's text. "
            "Call submit when done.",
            metadata={"task_id": task_id, "suite": suite},
        )
        for task_id in ids
    ]
    return Task(dataset=dataset, solver=[benchgym_episode(url, token), generate(tool_calls="loop")], scorer=verdict(url, token))


if __name__ == "__main__":
    # Offline: a scripted mock model that looks at the workspace and submits it unchanged (reward 0).
    # Its outputs say their token usage: mockllm would otherwise count tokens with tiktoken, which downloads its tables.
    model = "mockllm/model"
    outputs = [
        ModelOutput.for_tool_call(model, "list_dir", {"path": "."}),
        ModelOutput.for_tool_call(model, "submit", {}),
        ModelOutput.from_content(model, "Done."),
    ]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    url = os.environ.get("BENCHGYM_URL", "http://127.0.0.1:7420")
    log_dir = os.environ.get("INSPECT_LOG_DIR", "logs")
    mock = get_model(model, custom_outputs=outputs)
    log = eval(benchgym(url=url, tasks="roman-numerals"), model=mock, display="none", log_dir=log_dir)[0]
    if log.status != "success":
        sys.exit(f"status={log.status}: {log.error.message if log.error else ''}")
    score = log.samples[0].scores["verdict"]
    print(f"status={log.status} score={score.value}")
    print(score.explanation)
