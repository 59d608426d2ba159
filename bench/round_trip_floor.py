"""The floor under a round trip's CPU: what pydantic-core and asyncio themselves cost, without us.

    uv run --group bench python -m bench.round_trip_floor

For ``bench.in_memory``'s ``session/set_mode`` round trip: pydantic-core's own calls (serialise
the params, parse the request line, validate the params, validate and serialise the result,
parse the answer and validate its result), and asyncio's (one task switch, creating a task and
awaiting it: the agent's task per request, a future set on the next turn and awaited: the
client's wake-up). Process time (``time.process_time``), best of 5 repetitions, per call.
"""

from __future__ import annotations

import asyncio
import time
import timeit
from collections.abc import Callable, Coroutine
from typing import Any

from bench.generated import bindings

CALLS = 200_000


def _per_call(work: Callable[[], object]) -> float:
    timer = timeit.Timer(work, timer=time.process_time)
    return min(timer.repeat(number=CALLS, repeat=5)) / CALLS * 1e6


def pydantic_core_parts() -> dict[str, float]:
    models, built = bindings("models"), bindings("_runtime.connection.adapters").built
    from pydantic_core import from_json

    request = models.SetSessionModeRequest(session_id="sess-pipe-1", mode_id="code")
    params, result = built(models.SetSessionModeRequest), built(models.SetSessionModeResponse)
    line = b'{"jsonrpc":"2.0","id":17,"method":"session/set_mode","params":{"sessionId":"sess-pipe-1","modeId":"code"}}'
    answer = b'{"jsonrpc":"2.0","id":17,"result":{}}'
    raw = from_json(line)["params"]
    response = models.SetSessionModeResponse()
    options: dict[str, Any] = {"by_alias": True, "exclude_unset": True, "warnings": True}
    return {
        "client: serialise the params": _per_call(lambda: params.serializer.to_json(request, **options)),
        "agent: parse the request line": _per_call(lambda: from_json(line, allow_inf_nan=False)),
        "agent: validate the params": _per_call(lambda: params.validator.validate_python(raw)),
        "agent: validate the result": _per_call(lambda: result.validator.validate_python({})),
        "agent: serialise the result": _per_call(lambda: result.serializer.to_json(response, **options)),
        "client: parse the answer line": _per_call(lambda: from_json(answer, allow_inf_nan=False)),
        "client: validate the result": _per_call(lambda: result.validator.validate_python({})),
    }


def asyncio_parts() -> dict[str, float]:
    loop = asyncio.new_event_loop()

    async def nothing() -> None:
        return None

    async def switches() -> None:
        for _ in range(CALLS):
            await asyncio.sleep(0)

    async def tasks() -> None:
        for _ in range(CALLS):
            await loop.create_task(nothing())

    async def wake_ups() -> None:
        for _ in range(CALLS):
            future = loop.create_future()
            loop.call_soon(future.set_result, None)
            await future

    def best(work: Callable[[], Coroutine[Any, Any, None]]) -> float:
        times = []
        for _ in range(3):
            started = time.process_time()
            loop.run_until_complete(work())
            times.append(time.process_time() - started)
        return min(times) / CALLS * 1e6

    try:
        return {
            "one task switch (asyncio.sleep(0))": best(switches),
            "a task created and awaited (agent, per request)": best(tasks),
            "a future set on the next turn, awaited (client)": best(wake_ups),
        }
    finally:
        loop.close()


def main() -> None:
    parts = pydantic_core_parts()
    for name, micros in parts.items():
        print(f"{name:58} {micros:6.2f} us")
    print(f"{'pydantic-core in one round trip':58} {sum(parts.values()):6.2f} us")
    for name, micros in asyncio_parts().items():
        print(f"{'asyncio: ' + name:58} {micros:6.2f} us")


if __name__ == "__main__":
    main()
