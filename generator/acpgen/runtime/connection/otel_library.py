"""OpenTelemetry's API, as the runtime's telemetry (``telemetry``, ``traced``) uses it.

Support code: it knows no method of the protocol. Imported only once the application
itself imported OpenTelemetry (``telemetry.find``), it holds the API's own objects; to a
type checker it is ``otel_library.pyi``, which types only what the runtime uses, so that
a project without the ``otel`` extra type-checks all the same.
"""

from __future__ import annotations

import importlib

_trace = importlib.import_module("opentelemetry.trace")
_metrics = importlib.import_module("opentelemetry.metrics")
_propagate = importlib.import_module("opentelemetry.propagate")
_context = importlib.import_module("opentelemetry.context")

__all__ = [
    "Context",
    "Meter",
    "MeterProvider",
    "Observation",
    "Span",
    "SpanKind",
    "Status",
    "StatusCode",
    "Tracer",
    "TracerProvider",
    "attach",
    "detach",
    "extract",
    "get_meter_provider",
    "get_tracer_provider",
    "inject",
    "set_span_in_context",
]

SpanKind = _trace.SpanKind
StatusCode = _trace.StatusCode
Status = _trace.Status
Span = _trace.Span
Tracer = _trace.Tracer
TracerProvider = _trace.TracerProvider
get_tracer_provider = _trace.get_tracer_provider
set_span_in_context = _trace.set_span_in_context
Meter = _metrics.Meter
MeterProvider = _metrics.MeterProvider
Observation = _metrics.Observation
get_meter_provider = _metrics.get_meter_provider
inject = _propagate.inject
extract = _propagate.extract
Context = _context.Context
attach = _context.attach
detach = _context.detach
