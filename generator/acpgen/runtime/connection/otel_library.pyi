# What the runtime's telemetry uses of OpenTelemetry's API, typed
# (``otel_library.py`` is the API's own).

from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any, TypeAlias

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

Attributes: TypeAlias = Mapping[str, str | int | float | bool | Sequence[str]]

class SpanKind:
    CLIENT: SpanKind
    SERVER: SpanKind

class StatusCode:
    ERROR: StatusCode

class Context: ...

class Status:
    def __init__(
        self, status_code: StatusCode, description: str | None = None
    ) -> None: ...

class Span:
    def set_attribute(self, key: str, value: str | float | bool) -> None: ...
    def set_status(self, status: Status) -> None: ...
    def update_name(self, name: str) -> None: ...
    def is_recording(self) -> bool: ...
    def end(self, end_time: int | None = None) -> None: ...

class Tracer:
    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = ...,
        attributes: Attributes | None = None,
    ) -> Span: ...

class TracerProvider:
    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
    ) -> Tracer: ...

class Observation:
    def __init__(self, value: float, attributes: Attributes | None = None) -> None: ...

class _Recorder:
    def record(self, amount: float, attributes: Attributes | None = None) -> None: ...

class _Adder:
    def add(self, amount: float, attributes: Attributes | None = None) -> None: ...

Callback: TypeAlias = Callable[[Any], Iterable[Observation]]

class Meter:
    def create_histogram(
        self,
        name: str,
        unit: str = "",
        description: str = "",
        *,
        explicit_bucket_boundaries_advisory: Sequence[float] | None = None,
    ) -> _Recorder: ...
    def create_counter(
        self, name: str, unit: str = "", description: str = ""
    ) -> _Adder: ...
    def create_up_down_counter(
        self, name: str, unit: str = "", description: str = ""
    ) -> _Adder: ...
    def create_observable_up_down_counter(
        self,
        name: str,
        callbacks: Sequence[Callback] | None = None,
        unit: str = "",
        description: str = "",
    ) -> object: ...

class MeterProvider:
    def get_meter(
        self,
        name: str,
        version: str | None = None,
        schema_url: str | None = None,
    ) -> Meter: ...

def get_tracer_provider() -> TracerProvider: ...
def get_meter_provider() -> MeterProvider: ...
def set_span_in_context(span: Span, context: Context | None = None) -> Context: ...
def inject(
    carrier: MutableMapping[str, str], context: Context | None = None
) -> None: ...
def extract(carrier: Mapping[str, Any], context: Context | None = None) -> Context: ...
def attach(context: Context) -> object: ...
def detach(token: object) -> None: ...
