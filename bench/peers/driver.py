"""Drives mini-swe-agent and SWE-ReX for bench/peers.ts: one JSON request per stdin line, one
JSON reply per stdout line, each peer call timed here (perf_counter) so the pipe is not counted.

SWE-ReX runs through its own DockerDeployment and RemoteRuntime, with two changes so that its
container keeps `--network none`: swerex-remote listens on a unix socket in a bind-mounted
directory instead of TCP port 8000, and RemoteRuntime's aiohttp connector is a UnixConnector
on that socket (same HTTP requests, same server code; only the socket family differs).
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types

# Replies get the real stdout; whatever the peers print (banners, logs) goes to stderr.
REPLIES = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr

# A peer whose install failed is skipped by bench/peers.ts; the other one still runs.
try:
    import aiohttp
    import swerex.runtime.remote as rex_remote
    from swerex.deployment.docker import DockerDeployment
    from swerex.runtime.abstract import BashAction, Command, CreateBashSessionRequest, ReadFileRequest, WriteFileRequest
    from swerex.runtime.local import LocalRuntime
except ImportError:
    rex_remote = None
try:
    from minisweagent.environments.docker import DockerEnvironment
    from minisweagent.environments.local import LocalEnvironment
except ImportError:
    pass

SOCKET_IN_CONTAINER = "/run/swerex/rex.sock"
current_socket = {"path": ""}

if rex_remote is not None:
    # RemoteRuntime builds `aiohttp.TCPConnector(force_close=True)` per request: hand it a unix one.
    rex_remote.aiohttp = types.SimpleNamespace(
        **{name: getattr(aiohttp, name) for name in dir(aiohttp) if not name.startswith("__")},
    )
    rex_remote.aiohttp.TCPConnector = lambda **kw: aiohttp.UnixConnector(path=current_socket["path"], **kw)

    class UnixSocketDockerDeployment(DockerDeployment):
        """SWE-ReX's DockerDeployment whose server listens on a unix socket (no network needed)."""

        def _get_swerex_start_cmd(self, token: str) -> list[str]:
            serve = (
                "import uvicorn, swerex.server as s; "
                f"s.AUTH_TOKEN = {token!r}; "
                f"uvicorn.run(s.app, uds={SOCKET_IN_CONTAINER!r}, log_level='warning')"
            )
            return ["python3", "-c", serve]


def ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


class Peers:
    def __init__(self) -> None:
        self.msa_local = None
        self.msa_docker: list = []
        self.rex: list = []
        self.rex_local = LocalRuntime() if rex_remote is not None else None
        self.workdir = tempfile.mkdtemp(prefix="benchgym-peers-")

    @property
    def rex_runtime(self):
        deployment, sock = self.rex[-1]
        current_socket["path"] = sock
        return deployment.runtime

    async def stop_rex(self) -> None:
        deployment, sock = self.rex.pop()
        current_socket["path"] = sock
        await deployment.stop()
        shutil.rmtree(os.path.dirname(sock), ignore_errors=True)

    async def handle(self, req: dict) -> dict:
        op = req["op"]
        if op == "msa_local_start":
            t0 = time.perf_counter()
            self.msa_local = LocalEnvironment(cwd=self.workdir)
            out = self.msa_local.execute({"command": "true"})
            return {"ms": ms_since(t0), "ok": out["returncode"] == 0}
        if op == "msa_local_exec":
            t0 = time.perf_counter()
            out = self.msa_local.execute({"command": "true"})
            return {"ms": ms_since(t0), "ok": out["returncode"] == 0}
        if op == "msa_docker_start":
            t0 = time.perf_counter()
            env = DockerEnvironment(image=req["image"], run_args=["--rm", "--network", "none"])
            out = env.execute({"command": "true"})
            ms = ms_since(t0)
            self.msa_docker.append(env)
            return {"ms": ms, "ok": out["returncode"] == 0}
        if op == "msa_docker_exec":
            t0 = time.perf_counter()
            out = self.msa_docker[-1].execute({"command": "true"})
            return {"ms": ms_since(t0), "ok": out["returncode"] == 0}
        if op == "msa_docker_stop":
            env = self.msa_docker.pop()
            subprocess.run(["docker", "rm", "-f", env.container_id], capture_output=True)
            env.container_id = None
            return {"ok": True}
        if op == "rex_start":
            sock_dir = tempfile.mkdtemp(prefix="benchgym-peers-rex-")
            sock = os.path.join(sock_dir, "rex.sock")
            current_socket["path"] = sock
            t0 = time.perf_counter()
            deployment = UnixSocketDockerDeployment(
                image=req["image"],
                pull="never",
                docker_args=["--network", "none", "-v", f"{sock_dir}:/run/swerex"],
                startup_timeout=60,
            )
            await deployment.start()
            runtime = deployment.runtime
            await runtime.create_session(CreateBashSessionRequest())
            obs = await runtime.run_in_session(BashAction(command="true", check="silent"))
            ms = ms_since(t0)
            self.rex.append((deployment, sock))
            return {"ms": ms, "ok": obs.exit_code == 0}
        if op == "rex_execute":
            runtime = self.rex_runtime
            t0 = time.perf_counter()
            r = await runtime.execute(Command(command="true", shell=True))
            return {"ms": ms_since(t0), "ok": r.exit_code == 0}
        if op == "rex_run_in_session":
            runtime = self.rex_runtime
            t0 = time.perf_counter()
            obs = await runtime.run_in_session(BashAction(command="true", check="silent"))
            return {"ms": ms_since(t0), "ok": obs.exit_code == 0}
        if op == "rex_file":
            runtime = self.rex_runtime
            content = req["content"]
            t0 = time.perf_counter()
            await runtime.write_file(WriteFileRequest(path="/tmp/bench_file.py", content=content))
            r = await runtime.read_file(ReadFileRequest(path="/tmp/bench_file.py"))
            return {"ms": ms_since(t0), "ok": r.content == content}
        if op == "rex_stop":
            await self.stop_rex()
            return {"ok": True}
        if op == "rex_local_execute":
            t0 = time.perf_counter()
            r = await self.rex_local.execute(Command(command="true", shell=True))
            return {"ms": ms_since(t0), "ok": r.exit_code == 0}
        if op == "close":
            while self.rex:
                await self.stop_rex()
            while self.msa_docker:
                env = self.msa_docker.pop()
                subprocess.run(["docker", "rm", "-f", env.container_id], capture_output=True)
                env.container_id = None
            shutil.rmtree(self.workdir, ignore_errors=True)
            return {"ok": True}
        raise ValueError(f"unknown op {op}")


async def main() -> None:
    peers = Peers()
    loop = asyncio.get_running_loop()
    print(json.dumps({"ready": True}), file=REPLIES, flush=True)
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        req = json.loads(line)
        try:
            reply = await peers.handle(req)
        except Exception as e:  # the bench reports it and goes on with the other peers
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps({"id": req.get("id"), **reply}), file=REPLIES, flush=True)
        if req["op"] == "close":
            break


if __name__ == "__main__":
    asyncio.run(main())
