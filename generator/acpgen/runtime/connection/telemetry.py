"""OpenTelemetry, where the application set it up: the tracer, the meter and the
instruments the runtime records to.

Support code: it knows no method of the protocol. The runtime uses OpenTelemetry's API
only (acpgen's ``otel`` extra): the SDK, its exporters and the global providers are
the application's. :func:`find` gives None, and the runtime imports nothing of
OpenTelemetry, unless the application imported it itself and set a tracer or a meter
provider of its own (an SDK's: the API's proxies and no-op providers record nothing)
before a connection is made; ``OTEL_SDK_DISABLED=true`` turns it off too. So a
program without OpenTelemetry, or that never configured it, runs exactly as before.

What is recorded (``docs/observability.md``): a span per JSON-RPC request on each side,
notifications as short spans, a ``session/update`` stream counted on the span of the
request it belongs to (``traced``); the metrics of :class:`Telemetry`.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import otel_library as otel

__all__ = [
    "FIND",
    "SCOPE",
    "Telemetry",
    "add",
    "count",
    "find",
    "gauge",
    "transport_name",
]

FIND = object()
"""``Connection(telemetry=FIND)``, the default: what :func:`find` finds."""

SCOPE = "acp_bindings.runtime"
"""The instrumentation scope's name (the tracer's and the meter's)."""

DURATION_BUCKETS = (1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)
"""``rpc.*.duration`` buckets, in milliseconds (a turn may take many seconds)."""
SIZE_BUCKETS = (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 33554432)
"""``acp.message.size`` buckets, in bytes."""


class Telemetry:
    """The tracer and the instruments of one pair of providers (None: none of that
    kind). :func:`find` makes one per pair of providers, once; a program may make its
    own (``Connection(..., telemetry=Telemetry(tracer_provider=...))``)."""

    def __init__(
        self,
        *,
        tracer_provider: otel.TracerProvider | None = None,
        meter_provider: otel.MeterProvider | None = None,
    ) -> None:
        from . import otel_library

        self.otel = otel_library
        self.tracer = (
            tracer_provider.get_tracer(SCOPE) if tracer_provider is not None else None
        )
        self.metered = meter_provider is not None
        self.sources: dict[str, weakref.WeakSet[Any]] = {}
        """What the observable gauges count, by gauge: objects with a ``gauge(name)``
        method giving ``(value, attributes)`` pairs (the remote apps, the relays)."""
        if meter_provider is None:
            return
        meter = meter_provider.get_meter(SCOPE)
        self.server_duration = meter.create_histogram(
            "rpc.server.duration",
            "ms",
            "Time to handle a peer's JSON-RPC request, to its answer",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.client_duration = meter.create_histogram(
            "rpc.client.duration",
            "ms",
            "Time from sending a JSON-RPC request to its answer",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.message_size = meter.create_histogram(
            "acp.message.size",
            "By",
            "Size of each JSON-RPC message read or written, by direction",
            explicit_bucket_boundaries_advisory=SIZE_BUCKETS,
        )
        self.refused = meter.create_counter(
            "acp.connections.refused",
            "{connection}",
            "Requests and upgrades refused before any agent ran, by reason",
        )
        self.resumes = meter.create_counter(
            "acp.resumes", "{resume}", "Reattachments of a resumable agent, by outcome"
        )
        self.caught_up = meter.create_counter(
            "acp.resume.events",
            "{event}",
            "Events a resumed client caught up on (sent again from the agent's log)",
        )
        self.agents_started = meter.create_counter(
            "acp.relay.agent.starts",
            "{process}",
            "Agent processes the relay started (outcome: started or failed)",
        )
        for name, unit, text in _GAUGES:
            meter.create_observable_up_down_counter(
                name, [self._observer(name)], unit, text
            )

    def count(self, source: Any, *names: str) -> None:
        """Let ``source`` report the gauges ``names`` (while it lives)."""
        for name in names:
            self.sources.setdefault(name, weakref.WeakSet()).add(source)

    def _observer(self, name: str) -> Callable[[Any], Iterable[otel.Observation]]:
        def observe(options: Any) -> Iterator[otel.Observation]:
            totals: dict[tuple[tuple[str, str], ...], int] = {}
            for source in list(self.sources.get(name, ())):
                for value, attributes in source.gauge(name):
                    key = tuple(sorted(attributes.items()))
                    totals[key] = totals.get(key, 0) + value
            for key, value in sorted(totals.items()):
                yield self.otel.Observation(value, dict(key))

        return observe


_GAUGES = (
    ("acp.connections.open", "{connection}", "Remote ACP connections open, by profile"),
    (
        "acp.agents.detached",
        "{agent}",
        "Resumable agents waiting for their client to come back, by profile",
    ),
    ("acp.relay.agents", "{process}", "Agent processes the relay runs now"),
)


def add(counter: str, value: int, attributes: dict[str, str]) -> None:
    """Add ``value`` to the counter of :class:`Telemetry` named by its attribute
    (``refused``, ``resumes``, ``caught_up``, ``agents_started``) where the application
    set a meter provider up; else nothing."""
    found = find()
    if found is not None and found.metered and value:
        getattr(found, counter).add(value, attributes)


def count(source: Any, *names: str) -> None:
    """Let ``source`` report the gauges ``names`` where the application set a meter
    provider up (its ``gauge(name)`` gives ``(value, attributes)`` pairs)."""
    found = find()
    if found is not None and found.metered:
        found.count(source, *names)


def gauge(values: dict[str, int], attribute: str) -> list[tuple[int, dict[str, str]]]:
    """``(value, {attribute: key})`` pairs of ``values``, for a source's ``gauge``."""
    return [(value, {attribute: key}) for key, value in values.items()]


def transport_name(transport: object) -> str:
    """The transport's name for ``acp.transport``: ``stdio``, ``http``, ``websocket``
    (its ``telemetry_name``), else ``other``."""
    name = getattr(transport, "telemetry_name", None)
    return name if type(name) is str else "other"


_FOUND: dict[tuple[int, int], Telemetry] = {}


def find() -> Telemetry | None:
    """The telemetry of the providers the application set, made once; None when it set
    none (or did not import OpenTelemetry, which is then not imported here either)."""
    if "opentelemetry.trace" not in sys.modules and (
        "opentelemetry.metrics" not in sys.modules
    ):
        return None
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    from . import otel_library as otel

    tracer_provider: otel.TracerProvider | None = otel.get_tracer_provider()
    meter_provider: otel.MeterProvider | None = otel.get_meter_provider()
    if _the_apis_own(tracer_provider):
        tracer_provider = None
    if _the_apis_own(meter_provider):
        meter_provider = None
    if tracer_provider is None and meter_provider is None:
        return None
    key = (id(tracer_provider), id(meter_provider))
    found = _FOUND.get(key)
    if found is None:
        found = _FOUND[key] = Telemetry(
            tracer_provider=tracer_provider, meter_provider=meter_provider
        )
    return found


def _the_apis_own(provider: object) -> bool:
    """The API's proxy or no-op provider: nothing configured."""
    module = type(provider).__module__
    return module.startswith(("opentelemetry.trace", "opentelemetry.metrics"))
