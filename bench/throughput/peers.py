"""The peers' side of bench/throughput.ts: N concurrent episodes of S steps each (run a command,
view a file, edit it), through mini-swe-agent's or SWE-ReX's own environment classes.

    python peers.py '{"peer": "msa-local", "n": 8, "steps": 50, "image": "benchgym/base-python:3.11"}'

Prints one JSON line: the step latencies (ms), the wall time of the steps, this process's CPU
(and its children's: mini-swe-agent's subprocesses and docker CLIs) and its peak RSS.

- msa-local / msa-docker: mini-swe-agent's LocalEnvironment / DockerEnvironment. Its API is one
  call, execute(command): a view is `cat -n`, an edit is `sed -i`. Its calls block, so the N
  episodes run on N threads (as its own batch runner does).
- rex-local / rex-docker: SWE-ReX's LocalRuntime / DockerDeployment + RemoteRuntime: execute(),
  read_file(), and an edit as read_file + write_file (its runtime has no edit). Async, N tasks.
  In Docker, swerex-remote listens on a unix socket in a bind-mounted folder (the containers keep
  --network none, as benchgym's), as bench/peers/driver.py does, one socket per episode (a
  context variable picks it per task).
"""

import asyncio
import contextvars
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types

REPLIES = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr

FILE = "bench_file.py"
CONTENT = "".join(f"line_{i:02d} = {i}  # a line of the benchmark file\n" for i in range(1, 61)) + "# marker 0\n"
SOCKET_IN_CONTAINER = "/run/swerex/rex.sock"
current_socket: contextvars.ContextVar[str] = contextvars.ContextVar("current_socket", default="")


def step_kind(i: int) -> str:
    return ("command", "view", "edit")[i % 3]


def run_msa(cfg: dict) -> tuple[list[float], float, list[str]]:
    from minisweagent.environments.docker import DockerEnvironment
    from minisweagent.environments.local import LocalEnvironment

    n, steps = cfg["n"], cfg["steps"]
    envs, dirs = [], []
    errors: list[str] = []
    lock = threading.Lock()

    def start(k: int):
        if cfg["peer"] == "msa-local":
            d = tempfile.mkdtemp(prefix="bench-throughput-msa-")
            dirs.append(d)
            with open(os.path.join(d, FILE), "w") as f:
                f.write(CONTENT)
            return LocalEnvironment(cwd=d)
        env = DockerEnvironment(image=cfg["image"], cwd="/tmp", run_args=["--rm", "--network", "none"])
        env.execute({"command": f"printf %s {json.dumps(CONTENT)} > {FILE}"})
        return env

    threads = [threading.Thread(target=lambda k=k: envs.append(start(k))) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies: list[float] = []
    barrier = threading.Barrier(n + 1)

    def episode(env):
        barrier.wait()
        for i in range(steps):
            kind = step_kind(i)
            cmd = {"command": f"echo step {i}", "view": f"cat -n {FILE}", "edit": f"sed -i 's/^# marker .*/# marker {i}/' {FILE}"}[kind]
            t0 = time.perf_counter()
            out = env.execute({"command": cmd})
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                if out.get("returncode") != 0:
                    errors.append(f"{kind}: exit {out.get('returncode')}: {str(out.get('output'))[:200]}")
                else:
                    latencies.append(ms)

    workers = [threading.Thread(target=episode, args=(e,)) for e in envs]
    for w in workers:
        w.start()
    barrier.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    wall = time.perf_counter() - t0
    for e in envs:
        if getattr(e, "container_id", None):
            subprocess.run(["docker", "rm", "-f", e.container_id], capture_output=True)
            e.container_id = None
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    return latencies, wall, errors


async def run_rex(cfg: dict) -> tuple[list[float], float, list[str]]:
    import aiohttp
    import swerex.runtime.remote as rex_remote
    from swerex.deployment.docker import DockerDeployment
    from swerex.runtime.abstract import Command, ReadFileRequest, WriteFileRequest
    from swerex.runtime.local import LocalRuntime

    n, steps = cfg["n"], cfg["steps"]
    errors: list[str] = []
    latencies: list[float] = []
    if cfg["peer"] == "rex-docker":
        rex_remote.aiohttp = types.SimpleNamespace(**{k: getattr(aiohttp, k) for k in dir(aiohttp) if not k.startswith("__")})
        rex_remote.aiohttp.TCPConnector = lambda **kw: aiohttp.UnixConnector(path=current_socket.get(), **kw)

        class UnixSocketDockerDeployment(DockerDeployment):
            def _get_swerex_start_cmd(self, token: str) -> list[str]:
                serve = f"import uvicorn, swerex.server as s; s.AUTH_TOKEN = {token!r}; uvicorn.run(s.app, uds={SOCKET_IN_CONTAINER!r}, log_level='warning')"
                return ["python3", "-c", serve]

    async def start(k: int):
        if cfg["peer"] == "rex-local":
            d = tempfile.mkdtemp(prefix="bench-throughput-rex-")
            runtime = LocalRuntime()
            await runtime.write_file(WriteFileRequest(path=os.path.join(d, FILE), content=CONTENT))
            return {"runtime": runtime, "dir": d, "path": os.path.join(d, FILE)}
        sock_dir = tempfile.mkdtemp(prefix="bench-throughput-rexsock-")
        current_socket.set(os.path.join(sock_dir, "rex.sock"))
        dep = UnixSocketDockerDeployment(image=cfg["rex_image"], pull="never", docker_args=["--network", "none", "-v", f"{sock_dir}:/run/swerex"], startup_timeout=600)
        await dep.start()
        await dep.runtime.write_file(WriteFileRequest(path=f"/tmp/{FILE}", content=CONTENT))
        return {"runtime": dep.runtime, "dir": "/tmp", "path": f"/tmp/{FILE}", "deployment": dep, "sock_dir": sock_dir, "socket": current_socket.get()}

    # Each start in its own task: its context variable (the socket) stays its own.
    eps = await asyncio.gather(*[asyncio.create_task(start(k)) for k in range(n)])
    gate = asyncio.Event()

    async def episode(ep):
        if "socket" in ep:
            current_socket.set(ep["socket"])
        rt = ep["runtime"]
        await gate.wait()
        for i in range(steps):
            kind = step_kind(i)
            t0 = time.perf_counter()
            try:
                if kind == "command":
                    r = await rt.execute(Command(command=f"echo step {i}", shell=True, cwd=ep["dir"]))
                    ok = r.exit_code == 0
                elif kind == "view":
                    r = await rt.read_file(ReadFileRequest(path=ep["path"]))
                    ok = "line_01" in r.content
                else:
                    r = await rt.read_file(ReadFileRequest(path=ep["path"]))
                    lines = r.content.split("\n")
                    lines[60] = f"# marker {i}"
                    await rt.write_file(WriteFileRequest(path=ep["path"], content="\n".join(lines)))
                    ok = True
            except Exception as e:  # counted, as benchgym's failed steps are
                ok = False
                errors.append(f"{kind}: {type(e).__name__}: {str(e)[:200]}")
            ms = (time.perf_counter() - t0) * 1000
            if ok:
                latencies.append(ms)

    tasks = [asyncio.create_task(episode(ep)) for ep in eps]
    await asyncio.sleep(0)
    t0 = time.perf_counter()
    gate.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    for ep in eps:
        if "deployment" in ep:
            current_socket.set(ep["socket"])
            try:
                await ep["deployment"].stop()
            except Exception:
                pass
            shutil.rmtree(ep["sock_dir"], ignore_errors=True)
        else:
            shutil.rmtree(ep["dir"], ignore_errors=True)
    return latencies, wall, errors


def main() -> None:
    cfg = json.loads(sys.argv[1])
    before_self = resource.getrusage(resource.RUSAGE_SELF)
    before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cfg["peer"].startswith("msa"):
        latencies, wall, errors = run_msa(cfg)
    else:
        latencies, wall, errors = asyncio.run(run_rex(cfg))
    after_self = resource.getrusage(resource.RUSAGE_SELF)
    after_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = lambda a, b: (a.ru_utime + a.ru_stime) - (b.ru_utime + b.ru_stime)
    out = {
        "latencies": latencies,
        "wallS": wall,
        # CPU over the whole run (starts included): the steps' share is not separable from getrusage.
        "cpuSelfS": cpu(after_self, before_self),
        "cpuChildrenS": cpu(after_children, before_children),
        "maxRssMiB": after_self.ru_maxrss / 1024,
        "errors": len(errors),
        "firstErrors": errors[:3],
    }
    print(json.dumps(out), file=REPLIES, flush=True)


if __name__ == "__main__":
    main()
