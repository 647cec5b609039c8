"""Training-loop style use of benchgym through OpenEnv's own client (docs/PROTOCOL.md, "OpenEnv").

    pip install openenv-core              # 0.3
    node bin/benchgym.js serve            # in one terminal
    python3 examples/openenv_client.py    # in another

An OpenEnv client takes benchgym's base URL, http://HOST:PORT/openenv. This resets the
inventory-discount-bug example, reads the code, fixes the bug with one edit_file call, runs the
visible tests, submits, and prints the reward (1). A trainer does the same with its model choosing
the calls: observation -> model -> {"tool_name": ..., "arguments": ...} -> step -> reward.
Options: BENCHGYM_OPENENV_URL (default http://127.0.0.1:7420/openenv), BENCHGYM_TOKEN (a server
with a token: OpenEnv's client takes no headers, so the token rides in the URL as Basic credentials).
"""

import os
from urllib.parse import urlsplit, urlunsplit

from openenv.core import GenericEnvClient

BUGGY = """        return sum(
            (line_total for product, _, line_total in self.lines() if product.taxable),
            Decimal("0.00"),
        )"""

FIXED = """        taxable = sum(
            (line_total for product, _, line_total in self.lines() if product.taxable),
            Decimal("0.00"),
        )
        return taxable - percent_of(taxable, self.coupon_percent)"""


def base_url():
    url = os.environ.get("BENCHGYM_OPENENV_URL", "http://127.0.0.1:7420/openenv")
    token = os.environ.get("BENCHGYM_TOKEN")
    if not token:
        return url
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"benchgym:{token}@{parts.netloc}"))


def call(env, tool, **arguments):
    """One step: a tool call. A failed call is an observation with an error, and the episode goes on."""
    result = env.step({"type": "call_tool", "tool_name": tool, "arguments": arguments})
    obs = result.observation
    text = obs["error"]["message"] if obs["error"] else obs["result"]["content"][0]["text"]
    return result, text


def main():
    with GenericEnvClient(base_url=base_url(), message_timeout_s=600).sync() as env:
        # reset(task_id=...) picks a task; reset(seed=N) without one takes the suite in a seeded order.
        first = env.reset(task_id="inventory-discount-bug", max_steps=30)
        print("\n".join(first.observation["text"].splitlines()[:3]), "\n")

        tools = env.step({"type": "list_tools"}).observation["tools"]
        print("tools:", ", ".join(t["name"] for t in tools), "\n")

        _, text = call(env, "view_file", path="shop/cart.py", start_line=74, end_line=79)
        print(text, "\n")
        _, text = call(env, "edit_file", path="shop/cart.py", old_str=BUGGY, new_str=FIXED)
        print(text.splitlines()[0], "\n")
        _, text = call(env, "run_tests")
        print(text.splitlines()[0], "\n")

        result, text = call(env, "submit")
        print(text)
        state = env.state()
        print(f"\nreward={result.reward} done={result.done} episode={state['episode_id']} steps={state['step_count']}")


if __name__ == "__main__":
    main()
