"""T8: what OpenTelemetry costs on T3's pipe: round trips with it off and on, and the SDK's for scale.

    uv run --group bench python -m bench.run --only T8

T3's client (this process) and agent (``bench.pipe_agent``), the same requests and widths: *off*, the
runtime as it runs where the application set no provider (``Connection``'s default); *on*, both
processes with OpenTelemetry's SDK set up as an application would: a tracer provider whose spans go
through a ``BatchSpanProcessor`` to an exporter that drops them (so the figure holds the runtime's and
the SDK's work, not an exporter's I/O), and a meter provider with an in-memory reader (every duration
and size is recorded and aggregated; nothing collects them during the rounds). The agent sets its
providers globally (``pipe_agent ours-otel``); this process hands its own to the client's connection
(``Connection(..., telemetry=Telemetry(...))``), so that off and on alternate in one process. The
official Python SDK's rate, measured in the same rounds, is the reference T3 uses: each figure's note
gives off and on against it. The ratio of a figure is on against off (1.00x: free).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from bench.figures import Figure
from bench.generated import bindings
from bench.round_trip import BURSTS, WORKLOADS, Metered, Peer, connect_ours, connect_theirs, running
from bench.timing import alternate


def providers() -> tuple[Any, Any]:
    """A tracer provider (batched spans, dropped) and a meter provider (an in-memory reader) of
    OpenTelemetry's SDK."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropping(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Dropping()))
    return tracer_provider, MeterProvider(metric_readers=[InMemoryMetricReader()])


def t8(rounds: int) -> list[Figure]:
    """Requests per second over a pipe with OpenTelemetry off and on (stock asyncio)."""
    loop = asyncio.new_event_loop()
    tracer_provider, meter_provider = providers()
    telemetry = bindings("_runtime.connection.telemetry").Telemetry(
        tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    peers: dict[str, Peer] = {
        "off": loop.run_until_complete(connect_ours()),
        "on": loop.run_until_complete(connect_ours(side="ours-otel", telemetry=telemetry)),
        "theirs": loop.run_until_complete(connect_theirs()),
    }
    contenders: dict[str, Metered] = {}
    for key, peer in peers.items():
        for work, call in peer.calls.items():
            for width, (burst, _) in BURSTS.items():
                contenders[f"{key}/{work}/{width}"] = Metered(running(loop, burst, call), peer.pid)
    try:
        medians = alternate(contenders, rounds)
        cpu = {name: run.per_request(BURSTS[name.rsplit("/", 1)[1]][1]) for name, run in contenders.items()}
    finally:
        for peer in peers.values():
            loop.run_until_complete(peer.close())
        loop.close()
        tracer_provider.shutdown()
        meter_provider.shutdown()
    figures = []
    for work, label in WORKLOADS.items():
        for width, (_, count) in BURSTS.items():
            rate = {who: count / medians[f"{who}/{work}/{width}"] for who in peers}
            used = {who: cpu[f"{who}/{work}/{width}"] for who in peers}
            on, off, theirs = rate["on"], rate["off"], rate["theirs"]
            note = (
                f"{1e6 / on:.0f} vs {1e6 / off:.0f} us per request, on vs off; against the SDK "
                f"({1e6 / theirs:.0f} us): off {off / theirs:.2f}x, on {on / theirs:.2f}x; CPU us per request, "
                f"client/agent: off {_cpu(used['off'])}, on {_cpu(used['on'])}"
            )
            title = f"T8 OpenTelemetry on vs off, pipe, {label}, {width} in flight, stock asyncio"
            figures.append(Figure(title, on, off, "req/s", "-", True, note))
    return figures


def _cpu(used: tuple[float, float | None]) -> str:
    client, agent = used
    return f"{client:.0f}/{agent:.0f}" if agent is not None else f"{client:.0f}/?"
