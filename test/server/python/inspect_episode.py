"""inspect_ai drives one benchgym episode over MCP: its MCP tool source pointed at the episode's
own endpoint, its scripted mock model calling the tools, a scorer reading submit's verdict.

    python inspect_episode.py EPISODE_MCP_URL PROMPT SCRIPT_JSON LOG_DIR

SCRIPT_JSON is the list of tool calls the mock model makes, [[name, arguments], ...]. Prints one
JSON object: the eval's status, the score, and the tools that ran with their errors.
"""

import json
import re
import sys

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.model import _tokens
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate, use_tools
from inspect_ai.tool import mcp_server_http, mcp_tools

url, prompt, script_path, log_dir = sys.argv[1:5]
with open(script_path) as f:
    script = json.load(f)

# inspect_ai counts tokens with tiktoken's o200k_base, which it downloads; offline, a local
# estimate (4 characters a token) stands in. The scripted outputs carry their usage anyway.
_tokens.count_text_tokens = lambda text: max(1, len(text) // 4)

MODEL = "mockllm/model"
outputs = [ModelOutput.for_tool_call(MODEL, name, args) for name, args in script]
outputs.append(ModelOutput.from_content(MODEL, "Submitted."))
for output in outputs:
    output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)


@scorer(metrics=[accuracy()])
def verdict():
    """The reward of benchgym's verdict, as the submit tool returned it."""

    async def score(state: TaskState, target: Target) -> Score:
        for message in state.messages:
            if message.role == "tool" and message.function == "submit" and not message.error:
                found = re.search(r"\(reward ([01])\)", message.text)
                return Score(value=int(found.group(1)) if found else 0, explanation=message.text[:300])
        return Score(value=0, explanation="submit was not called")

    return score


task = Task(
    dataset=[Sample(input=prompt)],
    solver=[use_tools(mcp_tools(mcp_server_http(name="benchgym", url=url))), generate(tool_calls="loop")],
    scorer=verdict(),
)
log = eval(task, model=get_model(MODEL, custom_outputs=outputs), log_dir=log_dir, display="none")[0]
sample = log.samples[0] if log.samples else None
print(
    json.dumps(
        {
            "status": log.status,
            "error": log.error.message if log.error else None,
            "score": sample.scores["verdict"].value if sample and sample.scores else None,
            "explanation": sample.scores["verdict"].explanation if sample and sample.scores else None,
            "tools": [m.function for m in sample.messages if m.role == "tool"] if sample else [],
            "tool_errors": [m.error.message if m.error else None for m in sample.messages if m.role == "tool"] if sample else [],
        }
    )
)
