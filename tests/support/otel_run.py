"""Run a Python program with OpenTelemetry's SDK set up, as an application would, its
spans and metrics written to files for a test to read.

    python -m tests.support.otel_run PREFIX script.py args...
    python -m tests.support.otel_run PREFIX -m module args...
    python -m tests.support.otel_run PREFIX -c code args...

Sets the global tracer and meter providers (the program's business, never the runtime's)
before the program runs: each span is written to ``PREFIX.spans.jsonl`` as it ends (one
JSON object a line, the SDK's own ``to_json``), so a process that is stopped still leaves
its spans; the metrics are written to ``PREFIX.metrics.json`` at exit (and on SIGTERM).
``OTEL_RUN_SPANS=0`` sets the meter provider only, ``OTEL_RUN_METRICS=0`` the tracer
provider only. ``OTEL_RUN_PROMETHEUS=FILE`` also serves the metrics for Prometheus to scrape
(OpenTelemetry's Prometheus exporter, on a free port of 127.0.0.1, written to FILE).
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import signal
import sys
from collections.abc import Sequence
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class FileExporter(SpanExporter):
    """Each span, as it ends, as one JSON line."""

    def __init__(self, path: str) -> None:
        self.file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            self.file.write(json.dumps(json.loads(span.to_json()), separators=(",", ":")) + "\n")
        self.file.flush()
        return SpanExportResult.SUCCESS


def set_up(prefix: str, service: str) -> None:
    """The providers, the exporter of spans and the writing of metrics at exit."""
    resource = Resource.create({"service.name": service})
    if os.environ.get("OTEL_RUN_SPANS", "1") != "0":
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(SimpleSpanProcessor(FileExporter(prefix + ".spans.jsonl")))
        trace.set_tracer_provider(provider)
    if os.environ.get("OTEL_RUN_METRICS", "1") != "0":
        reader = InMemoryMetricReader()
        readers: list[Any] = [reader]
        if os.environ.get("OTEL_RUN_PROMETHEUS"):
            readers.append(_prometheus(os.environ["OTEL_RUN_PROMETHEUS"]))
        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=readers))
        written = False

        def write_metrics(*_: Any) -> None:
            nonlocal written
            if written:
                return
            written = True
            data = reader.get_metrics_data()
            with open(prefix + ".metrics.json", "w", encoding="utf-8") as file:
                file.write(data.to_json() if data is not None else "{}")

        atexit.register(write_metrics)
        previous = signal.getsignal(signal.SIGTERM)

        def on_sigterm(number: int, frame: Any) -> None:
            write_metrics()
            if callable(previous):
                previous(number, frame)
            else:
                raise SystemExit(143)

        signal.signal(signal.SIGTERM, on_sigterm)


def _prometheus(port_file: str) -> Any:
    """OpenTelemetry's Prometheus reader, served on a free port (written to ``port_file``)."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import start_http_server

    reader = PrometheusMetricReader()
    server, _ = start_http_server(0, addr="127.0.0.1")
    with open(port_file + ".tmp", "w", encoding="utf-8") as file:
        file.write(str(server.server_port))
    os.replace(port_file + ".tmp", port_file)
    return reader


def main(arguments: list[str]) -> None:
    prefix, rest = arguments[0], arguments[1:]
    if rest[0] == "-c":
        set_up(prefix, "python-c")
        sys.argv = ["-c", *rest[2:]]
        exec(compile(rest[1], "<string>", "exec"), {"__name__": "__main__"})
    elif rest[0] == "-m":
        set_up(prefix, rest[1])
        sys.argv = [rest[1], *rest[2:]]
        runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
    else:
        set_up(prefix, os.path.basename(rest[0]))
        sys.argv = rest
        runpy.run_path(rest[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
