"""A client of benchgym's WebSocket gym protocol (docs/PROTOCOL.md, "WebSocket gym protocol").

    pip install websockets                # version 13 or later
    node bin/benchgym.js serve            # in one terminal
    python3 examples/ws_client.py         # in another

It resets the inventory-discount-bug example, looks at the code, fixes the bug, runs the
visible tests (their output streams in as `output` notifications), submits and prints the
reward. Options: BENCHGYM_URL (default ws://127.0.0.1:7420/ws), BENCHGYM_TOKEN.
"""

import asyncio
import itertools
import json
import os
import sys

from websockets.asyncio.client import connect


class GymClient:
    """JSON-RPC 2.0 over one WebSocket: requests may overlap; notifications go to stderr."""

    def __init__(self, ws):
        self.ws = ws
        self.ids = itertools.count(1)
        self.pending = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self):
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                method = msg.get("method")
                if method == "output":
                    sys.stderr.write(msg["params"]["chunk"])
                elif method == "progress" and msg["params"].get("message"):
                    sys.stderr.write(f"[progress] {msg['params']['message']}\n")
                elif method == "output_dropped":
                    sys.stderr.write(f"[{msg['params']['bytes']} bytes of output dropped]\n")
                elif msg.get("id") in self.pending:
                    future = self.pending.pop(msg["id"])
                    if "error" in msg:
                        err = msg["error"]
                        future.set_exception(RuntimeError(f"{err['message']} (JSON-RPC {err['code']})"))
                    else:
                        future.set_result(msg["result"])
        finally:
            for future in self.pending.values():
                future.set_exception(ConnectionError("connection closed"))

    async def call(self, method, **params):
        request_id = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        return await future

    async def step(self, episode_id, tool, **args):
        return await self.call("step", episode_id=episode_id, tool=tool, args=args)


BUGGY = """        return sum(
            (line_total for product, _, line_total in self.lines() if product.taxable),
            Decimal("0.00"),
        )"""

FIXED = """        taxable = sum(
            (line_total for product, _, line_total in self.lines() if product.taxable),
            Decimal("0.00"),
        )
        return taxable - percent_of(taxable, self.coupon_percent)"""


async def main():
    url = os.environ.get("BENCHGYM_URL", "ws://127.0.0.1:7420/ws")
    token = os.environ.get("BENCHGYM_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else None
    # Results can be large (a command's output, a diff): allow messages up to 64 MiB.
    async with connect(url, additional_headers=headers, max_size=64 * 1024 * 1024) as ws:
        gym = GymClient(ws)
        reset = await gym.call("reset", task_id="inventory-discount-bug", options={"max_steps": 30})
        episode_id = reset["episode_id"]
        print(f"reset: {episode_id}")
        print("\n".join(reset["observation"]["text"].splitlines()[:3]), "\n")

        viewed = await gym.step(episode_id, "view_file", path="shop/cart.py", start_line=74, end_line=79)
        print(viewed["observation"]["text"], "\n")

        fixed = await gym.step(episode_id, "edit_file", path="shop/cart.py", old_str=BUGGY, new_str=FIXED)
        # A failed tool call is an observation, not an exception: the loop goes on.
        if "error" in fixed["info"]:
            print("edit failed:", fixed["observation"]["text"])
        else:
            print(fixed["observation"]["text"].splitlines()[0], "\n")

        tests = await gym.step(episode_id, "run_tests")
        print("\n" + tests["observation"]["text"].splitlines()[0] + "\n")

        result = await gym.call("submit", episode_id=episode_id)
        print(result["observation"]["text"])
        print(f"\nreward={result['reward']} terminated={result['terminated']} truncated={result['truncated']}")


if __name__ == "__main__":
    asyncio.run(main())
