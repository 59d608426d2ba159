"""Where a Streamable HTTP round trip (T6) goes: wall time, the client's CPU and the server's CPU per
request, for each server, and the floor that HTTP alone costs.

    uv run --group bench python -m bench.http_breakdown [--requests N] [--rounds N] [--profile]

Contenders, each a server process of its own on a loopback port, with this process as the client (the
generated ``connect_agent``, ``session/set_mode`` requests one after another, as T6): ``ours-h1`` our
app under uvicorn (HTTP/1.1, h11), ``ours-h2`` our app under hypercorn over HTTP/2 (h2c, prior
knowledge: ``http2=True``), ``theirs-h1`` the TypeScript SDK's server on node. The floor: the same
client's transport POSTing the same bytes to a bare ASGI app under uvicorn that answers ``202`` (the
HTTP cost of one message with no ACP at all), its CPU on both sides. Rounds alternate; medians.
``--profile`` prints the client's cProfile time per package (ours, httpx, httpcore, h11, h2, anyio,
asyncio...) for ``ours-h1``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import pstats
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.generated import ROOT, bindings
from bench.pipe_agent import quiet_client
from bench.remote_trip import _start
from bench.round_trip import _process_seconds

SERVERS = {
    "ours-h1": ([sys.executable, "-m", "bench.remote_server"], None),
    "ours-h2": ([sys.executable, "-m", "bench.remote_server", "hypercorn"], True),
    "theirs-h1": (["node", str(ROOT / "tests" / "interop" / "remote_server.mjs")], None),
}
BARE = """
import asyncio, json, socket, sys, uvicorn
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
async def main():
    sock = socket.socket(); sock.bind(("127.0.0.1", 0)); sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    await serving
asyncio.run(main())
"""
PACKAGES = ("acp_bindings", "httpx", "httpcore", "h11", "h2", "hpack", "anyio", "sniffio", "asyncio", "json")


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _agent(stack: contextlib.AsyncExitStack, url: str, http2: bool | None) -> Callable[[], Awaitable[Any]]:
    models, remote = bindings("models"), bindings("remote")
    agent = await stack.enter_async_context(remote.connect_agent(url, quiet_client(), transport="http", http2=http2))
    await agent.initialize(models.InitializeRequest(protocol_version=1))
    session = await agent.new_session(models.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
    request = models.SetSessionModeRequest(session_id=session.session_id, mode_id="code")
    return lambda: agent.set_session_mode(request)


async def _bare_post(stack: contextlib.AsyncExitStack, url: str) -> Callable[[], Awaitable[Any]]:
    """The runtime's own request path (``_Requests.post``) without ACP: what HTTP costs."""
    http_requests = bindings("_runtime.remote.http_requests")
    timeout = http_requests.httpx.Timeout(30)
    requests = http_requests.Requests(url, {}, http_requests.CookieJar(), http2=None, timeout=timeout)
    stack.push_async_callback(requests.aclose)
    body = b'{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"s-1","modeId":"code"}}'
    headers = [(b"acp-connection-id", b"8c1f0f0e-0000-4000-8000-000000000000"), (b"acp-session-id", b"s-1")]
    return lambda: requests.post(body, headers)


def _measure(
    loop: asyncio.AbstractEventLoop, call: Callable[[], Awaitable[Any]], pid: int, n: int
) -> tuple[float, ...]:
    async def burst() -> None:
        for _ in range(n):
            await call()

    server, cpu, started = _process_seconds(pid) or 0.0, _own_cpu(), time.perf_counter()
    loop.run_until_complete(burst())
    wall, cpu, server = time.perf_counter() - started, _own_cpu() - cpu, (_process_seconds(pid) or 0.0) - server
    return tuple(1e6 * value / n for value in (wall, cpu, server))


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.http_breakdown", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    processes: dict[str, tuple[subprocess.Popen[str], str]] = {
        name: _start(command) for name, (command, _) in SERVERS.items()
    }
    processes["floor"] = _start([sys.executable, "-c", BARE])
    loop = asyncio.new_event_loop()
    stack = contextlib.AsyncExitStack()
    try:
        calls = {
            name: loop.run_until_complete(_agent(stack, url, SERVERS[name][1]))
            for name, (_, url) in processes.items()
            if name != "floor"
        }
        calls["floor"] = loop.run_until_complete(_bare_post(stack, processes["floor"][1]))
        samples: dict[str, list[tuple[float, ...]]] = {name: [] for name in calls}
        for name, call in calls.items():  # warm-up
            _measure(loop, call, processes[name][0].pid, 50)
        for _ in range(args.rounds):
            for name, call in calls.items():
                samples[name].append(_measure(loop, call, processes[name][0].pid, args.requests))
        title = f"us per request (median of {args.rounds} rounds)"
        print(f"{title:<44} {'wall':>7} {'client CPU':>11} {'server CPU':>11}")
        for name, values in samples.items():
            wall, cpu, server = (statistics.median(v[i] for v in values) for i in range(3))
            print(f"{name:<44} {wall:7.0f} {cpu:11.0f} {server:11.0f}")
        if args.profile:
            _profile(loop, calls["ours-h1"], args.requests)
    finally:
        loop.run_until_complete(stack.aclose())
        loop.close()
        for process, _ in processes.values():
            assert process.stdin is not None
            process.stdin.close()
            process.wait(30)
    return 0


def _profile(loop: asyncio.AbstractEventLoop, call: Callable[[], Awaitable[Any]], n: int) -> None:
    async def burst() -> None:
        for _ in range(n):
            await call()

    profiler = cProfile.Profile()
    profiler.enable()
    loop.run_until_complete(burst())
    profiler.disable()
    totals: dict[str, float] = {}
    profile: Any = pstats.Stats(profiler)
    stats = profile.stats
    for (filename, _, function), (_, _, own, _, _) in stats.items():
        package = next((p for p in PACKAGES if f"/{p}/" in filename or filename.endswith(f"/{p}.py")), None)
        if package is None and filename == "~":
            kernel = "poll" in function or "socket" in function
            package = "waiting (epoll)" if "poll" in function else "socket calls" if kernel else "builtins"
        totals[package or "other"] = totals.get(package or "other", 0.0) + own
    waiting = totals.pop("waiting (epoll)", 0.0)
    whole = sum(totals.values())
    print(
        f"\nours-h1 client, cProfile own time per package ({n} requests: {1e6 * whole / n:.0f} us busy each,"
        f" profiled, and {1e6 * waiting / n:.0f} us waiting in epoll):"
    )
    for package, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"  {package:<28} {100 * seconds / whole:5.1f}%")


if __name__ == "__main__":
    sys.exit(main())
