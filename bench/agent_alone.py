"""The agent's own CPU per request, in one process: T3's agent fed batches of requests.

    uv run --group bench python -m bench.agent_alone [--loop asyncio|uvloop] [--batch N]

T3 at 64 in flight is bound by our agent, and a pipe between two processes on a shared machine
moves its figure by 15% from run to run. This measures the agent's side alone, with less of that
noise (one process, no wake-ups; compare runs made in alternation): ``session/prompt`` lines,
encoded beforehand, are handed in batches of ``--batch`` (64: T3's in flight) to an in-memory
transport, the answers counted as they are written, no client and no system call. Three contenders
run in alternating rounds on one event loop:

- *ours*: the generated agent as ``serve.run_agent`` attaches it (``bench.pipe_agent``'s
  agent: it builds a ``PromptResponse`` per prompt), on a ``Connection``;
- *floor + handler*: T3's typed floor (``pipe_agent floor``: pydantic-core, a task per
  request) doing the same handler work as ours (reading the prompt's text and building the
  ``PromptResponse``);
- *floor*: the typed floor as T3 runs it (one answer built beforehand).

Prints the median CPU microseconds per request (``time.process_time``) of each, and ours less
the floor + handler: what the runtime's own bookkeeping costs a request.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.generated import bindings
from bench.in_memory import MemoryTransport
from bench.pipe_agent import _updates, new_loop, quick_agent

ROUNDS = 15
BATCHES = 100
"""Batches a round."""
LINE = (b'{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"sess-pipe-1",'
        b'"prompt":[{"type":"text","text":"0"}]}}')  # fmt: skip


class Feed(MemoryTransport):
    """``bench.in_memory``'s transport, handed batches of lines by :meth:`answered` and counting
    the answers written instead of delivering them to a peer."""

    def __init__(self) -> None:
        super().__init__()
        self.written = 0
        self._wanted = 0
        self._done: asyncio.Future[None] | None = None

    def send_now(self, data: bytes) -> None:
        self.written += 1
        if self.written == self._wanted and self._done is not None:
            self._done.set_result(None)

    async def send(self, data: bytes) -> None:
        self.send_now(data)

    async def answered(self, lines: list[bytes]) -> None:
        """Hand over ``lines``; return once each has been answered."""
        self._wanted = self.written + len(lines)
        self._done = asyncio.get_running_loop().create_future()
        for line in lines[:-1]:
            self._inbox.append(line)
        self.deliver(lines[-1])  # (wakes the reading)
        await self._done


Batch = Callable[[list[bytes]], Awaitable[None]]


async def ours() -> tuple[Batch, Callable[[], Awaitable[None]]]:
    feed = Feed()
    connection = bindings("serve").attach_agent(quick_agent(), feed)[0]
    connection.start()
    await feed.answered([b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'])
    return feed.answered, connection.close


def floor(handler_work: bool) -> Batch:
    """T3's typed floor on lines handed in batches (with the handler's work of ours, when
    ``handler_work``)."""
    from pydantic_core import from_json

    models, built = bindings("models"), bindings("_runtime.connection.adapters").built
    params, result = built(models.PromptRequest).validator, built(models.PromptResponse).serializer
    built_once = models.PromptResponse(stop_reason="end_turn")
    running: set[asyncio.Task[None]] = set()
    count = [0, 0]
    done: list[asyncio.Future[None]] = []
    last = [b""]

    async def handle(message: dict[str, Any]) -> None:
        read = params.validate_python(message["params"])
        answer = built_once
        if handler_work:  # what bench.pipe_agent's prompt does
            for _ in range(_updates(read.prompt[0].text)):
                pass
            answer = models.PromptResponse(stop_reason="end_turn")
        body = result.to_json(answer, by_alias=True, exclude_unset=True)
        last[0] = b'{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (message["id"], body)
        count[0] += 1
        if count[0] == count[1]:
            done[0].set_result(None)

    async def batch(lines: list[bytes]) -> None:
        loop = asyncio.get_running_loop()
        count[1] = count[0] + len(lines)
        done[:] = [loop.create_future()]
        for line in lines:
            task = loop.create_task(handle(from_json(line, allow_inf_nan=False)))
            running.add(task)
            task.add_done_callback(running.discard)
        await done[0]

    return batch


async def measure(batch_size: int) -> dict[str, float]:
    batch, close = await ours()
    contenders: dict[str, Batch] = {"ours": batch, "floor + handler": floor(True), "floor": floor(False)}
    ids = iter(range(10, 1 << 62))
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for round_number in range(ROUNDS + 1):  # the first round warms up
        for name, run in contenders.items():
            batches = [[LINE % next(ids) for _ in range(batch_size)] for _ in range(BATCHES)]
            used = time.process_time()
            for lines in batches:
                await run(lines)
            if round_number:
                samples[name].append((time.process_time() - used) / (BATCHES * batch_size) * 1e6)
    await close()
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.agent_alone", description=__doc__.splitlines()[0])
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="uvloop")
    parser.add_argument("--batch", type=int, default=64, help="requests handed over together (default 64)")
    args = parser.parse_args()
    with asyncio.Runner(loop_factory=new_loop(args.loop)) as runner:
        figures = runner.run(measure(args.batch))
    for name, micros in figures.items():
        print(f"{name:>16}: {micros:5.2f} us of CPU per request")
    print(f"{'runtime':>16}: {figures['ours'] - figures['floor + handler']:5.2f} us (ours less the floor + handler)")
    print(f"({args.loop}, {args.batch} a batch, median of {ROUNDS} rounds of {BATCHES * args.batch} requests)")


if __name__ == "__main__":
    main()
