"""The runtime's files (``acpgen.runtime``), copied verbatim into a generated package's
``_runtime`` folder (``render.package``): where they are, which they are, their text. Every
package holds the runtime a program runs; a tool's files only a package built with the tool."""

from __future__ import annotations

from importlib.resources import files

RUNTIME = files("acpgen.runtime")
"""The runtime's folder, found where acpgen is installed."""

FOLDER = "_runtime"
"""The runtime's folder inside a generated package."""

MODULES = (
    "__init__.py",
    "connection/__init__.py",
    "connection/adapters.py",
    "connection/capabilities.py",
    "connection/connection.py",
    "connection/dispatch.py",
    "connection/event_loop.py",
    "connection/in_flight.py",
    "connection/initialization.py",
    "connection/limits.py",
    "connection/lines.py",
    "connection/log_ids.py",
    "connection/otel_library.py",
    "connection/otel_library.pyi",
    "connection/process.py",
    "connection/reader.py",
    "connection/replies.py",
    "connection/senders.py",
    "connection/serve.py",
    "connection/telemetry.py",
    "connection/trace_writer.py",
    "connection/traced.py",
    "connection/transport.py",
    "connection/writer.py",
    "front_door.py",
    "mcp/__init__.py",
    "mcp/sessions.py",
    "mcp/stdio_client.py",
    "relay/__init__.py",
    "relay/app.py",
    "relay/pipe.py",
    "relay/spans.py",
    "remote/__init__.py",
    "remote/app.py",
    "remote/asgi.py",
    "remote/connect.py",
    "remote/deps.py",
    "remote/http_client.py",
    "remote/http_library.py",
    "remote/http_library.pyi",
    "remote/http_profile.py",
    "remote/http_requests.py",
    "remote/reach.py",
    "remote/refusal.py",
    "remote/server_connection.py",
    "remote/transports.py",
    "remote/websocket_client.py",
    "remote/websocket_library.py",
    "remote/websocket_library.pyi",
    "remote/websocket_profile.py",
    "resume/__init__.py",
    "resume/client.py",
    "resume/event_log.py",
    "resume/host.py",
    "resume/stdio.py",
    "resume/vocabulary.py",
    "session/__init__.py",
    "session/fold.py",
    "session/permissions.py",
    "session/readings.py",
    "session/tracker.py",
    "surface.py",
    "testing/__init__.py",
    "testing/pair.py",
    "testing/recording.py",
    "wire/__init__.py",
    "wire/codec.py",
    "wire/message_unions.py",
    "wire/messages.py",
    "wire/model_rules.py",
    "wire/rpc.py",
)
"""The runtime a program runs (POSIX paths inside its folder): copied into every package."""

TOOLS: dict[str, tuple[str, ...]] = {
    "conformance": ("tools/conformance/__init__.py",),
    "relay": ("tools/relay_command.py",),
    "trace": (
        "tools/trace/__init__.py",
        "tools/trace/html_view.py",
        "tools/trace/show.py",
        "tools/trace/text_view.py",
    ),
}
"""The tools (``acpgen conformance``, ``acpgen relay``, ``acpgen trace``), each with its files: a
package holds a tool's files only when its build asks for the tool (``acpgen vendor --with``).
The conformance kit's modules are listed by the kit's registry (:func:`kit_files`)."""

TOOL_NAMES: tuple[str, ...] = tuple(sorted(TOOLS))
NEEDS: dict[str, tuple[str, ...]] = {"conformance": ("relay",)}
"""The tools a tool runs (the kit serves its probe agent with the relay command: ``client --serve``)."""


def with_needs(tools: frozenset[str]) -> frozenset[str]:
    """``tools`` and the tools they need."""
    return tools | {need for tool in tools for need in NEEDS.get(tool, ())}


def kit_files(methods: frozenset[str] | None = None) -> tuple[str, ...]:
    """The conformance kit's module files a build with ``methods`` holds (every one: None)."""
    from acpgen.ir.conformance_checks import held, kit_modules

    chosen = kit_modules() if methods is None else held(methods)
    return tuple(m.file for m in chosen)


def modules(tools: frozenset[str] = frozenset(), methods: frozenset[str] | None = None) -> tuple[str, ...]:
    """The runtime files of a package with ``tools`` (names of :data:`TOOLS`) whose build has
    ``methods`` (the conformance kit's method-keyed modules; None: all of them), sorted."""
    chosen = [*MODULES]
    tools = with_needs(tools)
    if tools:
        chosen.append("tools/__init__.py")
    for name in sorted(tools):
        chosen += TOOLS[name]
    if "conformance" in tools:
        chosen += kit_files(methods)
    return tuple(sorted(chosen))


def source(name: str) -> str:
    """The source text of runtime file ``name`` (one of :func:`modules`)."""
    return RUNTIME.joinpath(*name.split("/")).read_text(encoding="utf-8")
