"""The runtime's files (``acpgen.runtime``), copied verbatim into every generated package's
``_runtime`` folder (``render.package``): where they are, which they are, their text."""

from __future__ import annotations

from importlib.resources import files

RUNTIME = files("acpgen.runtime")
"""The runtime's folder, found where acpgen is installed."""

FOLDER = "_runtime"
"""The runtime's folder inside a generated package."""

MODULES = (
    "__init__.py",
    "conformance/__init__.py",
    "conformance/agent_scenarios.py",
    "conformance/cli.py",
    "conformance/client_run.py",
    "conformance/driver.py",
    "conformance/judge.py",
    "conformance/peer.py",
    "conformance/probe_agent.py",
    "conformance/remote_peer.py",
    "conformance/report.py",
    "conformance/requirements.py",
    "conformance/runner.py",
    "conformance/trace_check.py",
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
    "connection/process.py",
    "connection/reader.py",
    "connection/replies.py",
    "connection/senders.py",
    "connection/serve.py",
    "connection/trace_writer.py",
    "connection/transport.py",
    "connection/writer.py",
    "front_door.py",
    "relay/__init__.py",
    "relay/app.py",
    "relay/main.py",
    "relay/pipe.py",
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
    "trace/__init__.py",
    "trace/html_view.py",
    "trace/show.py",
    "trace/text_view.py",
    "wire/__init__.py",
    "wire/codec.py",
    "wire/message_unions.py",
    "wire/messages.py",
    "wire/model_rules.py",
    "wire/rpc.py",
)
"""The runtime's files (POSIX paths inside its folder), every one copied."""


def source(name: str) -> str:
    """The source text of runtime file ``name`` (one of :data:`MODULES`)."""
    return RUNTIME.joinpath(*name.split("/")).read_text(encoding="utf-8")
