"""The runtime: protocol-independent support code that every generated package carries.

Each module here is ordinary Python, linted, type-checked and unit-tested in this
repository, and copied verbatim (behind the generated-file header) into each generated
package under the same name, where its relative imports resolve to the package's own
modules. It imports only the standard library, pydantic and its sibling modules here,
never :mod:`acpgen`, so that a generated package stays self-contained. What comes from
the schema (the method table, interfaces, typed senders, capability rules, error codes)
is rendered from templates instead.
"""

from __future__ import annotations

from importlib.resources import files

RUNTIME = files(__name__)
"""This package's folder, found where acpgen is installed."""

MODULES = (
    "_asgi.py",
    "_capabilities.py",
    "_event_log.py",
    "_fold.py",
    "_incoming.py",
    "_lazy.py",
    "_messages.py",
    "_permissions.py",
    "_process.py",
    "_remote_client.py",
    "_remote_deps.py",
    "_remote_refusal.py",
    "_remote_server.py",
    "_remote_socket.py",
    "_remote_state.py",
    "_resume_client.py",
    "_resume_host.py",
    "_resume_wire.py",
    "_rpc.py",
    "_sender.py",
    "_state.py",
    "_support.py",
    "_trace_cli.py",
    "_tracker.py",
    "_transcript.py",
    "_transcript_html.py",
    "_wire_log.py",
    "_work.py",
    "codec.py",
    "connection.py",
    "dispatch.py",
    "initialization.py",
    "stdio.py",
    "transport.py",
)
"""The files copied into every generated package."""


def source(name: str) -> str:
    """The source text of runtime module ``name`` (one of :data:`MODULES`)."""
    return (RUNTIME / name).read_text(encoding="utf-8")
