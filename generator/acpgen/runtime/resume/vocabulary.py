"""The resume extension on the wire: its names, and the messages it adds to ACP.

Support code: it knows no method of the protocol. ``docs/resume.md`` describes the
extension; the event log (``event_log``), the host (``host``) and the client
(``client``) build and read its messages here, so that all spell them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json

from ..wire.messages import json_object
from ..wire.rpc import Json

__all__ = [
    "EXTENSION",
    "LOST",
    "RECEIVED",
    "RESUME_SESSION",
    "Lost",
    "answer",
    "coalesced",
    "error",
    "granted",
    "lost_answer",
    "lost_error",
    "resume_request",
    "unknown_token",
    "with_token",
]

EXTENSION = "acpgen/resume"
"""The ``_meta`` key of the resume extension (``docs/resume.md``)."""
RESUME_SESSION = "_acpgen/resume_session"
"""The extension request resuming one session's events (``docs/resume.md``)."""
RECEIVED = "_acpgen/received"
"""The extension request asking how many client messages the agent received."""
LOST = -32060
"""The JSON-RPC error code of a resume that cannot be exact."""


@dataclass(frozen=True, slots=True)
class Lost:
    """Events after the id asked for are forgotten (or the id was never sent)."""

    first: int
    """The oldest event id still kept (``latest + 1`` when none is)."""
    latest: int
    """The id of the stream's newest event."""


def resume_request(message: Json) -> dict[str, Any] | None:
    """The resume extension's ``_meta`` in an ``initialize`` request, if any."""
    params: Json = message.get("params") if type(message) is dict else None
    meta: Json = params.get("_meta") if type(params) is dict else None
    found: Json = meta.get(EXTENSION) if type(meta) is dict else None
    return found if type(found) is dict else None


def answer(request_id: Any, result: Any) -> bytes:
    """A JSON-RPC result."""
    return to_json({"jsonrpc": "2.0", "id": request_id, "result": result})


def error(request_id: Any, message: str, data: Any) -> bytes:
    """The extension's error: a resume that cannot be exact."""
    error = {"code": LOST, "message": message, "data": data}
    return to_json({"jsonrpc": "2.0", "id": request_id, "error": error})


def unknown_token(request_id: Any) -> str:
    """The answer to an ``initialize`` resuming a connection this app no longer has."""
    error = {
        "code": LOST,
        "message": "the connection to resume is gone (unknown or expired token): "
        "initialize a new connection and load each session with session/load",
        "data": {"recover": "session/load"},
    }
    return to_json({"jsonrpc": "2.0", "id": request_id, "error": error}).decode()


def lost_error(stream: str | None, last: int, lost: Lost) -> tuple[str, dict[str, Any]]:
    """The message and data of the error saying the events of ``stream`` after ``last``
    are no longer kept."""
    what = f"session {stream!r}" if stream is not None else "the connection"
    text = (
        f"events of {what} after event {last} are no longer kept (the resume log "
        f"keeps events {lost.first}..{lost.latest}): load the session again "
        "with session/load"
    )
    data = {
        "sessionId": stream,
        "lastEventId": last,
        "firstEventId": lost.first,
        "latestEventId": lost.latest,
        "recover": "session/load",
    }
    return text, data


def lost_answer(stream: str | None, last: int, lost: Lost) -> str:
    """A JSON-RPC error (id null): why ``stream`` cannot resume after ``last`` (the body
    of a 410 to ``Last-Event-ID``)."""
    return error(None, *lost_error(stream, last, lost)).decode()


def with_token(message: dict[str, Any], token: str) -> bytes:
    """The agent's ``initialize`` answer, granting the extension with ``token``."""
    result: Json = message.get("result")
    if type(result) is not dict:
        return to_json(message)
    meta = json_object(result.get("_meta"))
    ours = {"version": 1, "token": token}
    return to_json(
        {**message, "result": {**result, "_meta": {**meta, EXTENSION: ours}}}
    )


def granted(message: dict[str, Any]) -> str | None:
    """The token an ``initialize`` answer grants, if it grants one."""
    ours = json_object(json_object(message.get("result")).get("_meta")).get(EXTENSION)
    token = json_object(ours).get("token")
    return token if type(token) is str else None


def coalesced(message: dict[str, Any]) -> tuple[int, int] | None:
    """The ids a joined chunk stands for, if it is one."""
    mark = json_object(json_object(message.get("params")).get("_meta")).get(EXTENSION)
    span: Json = json_object(mark).get("coalesced")
    if type(span) is list and len(span) == 2 and all(type(n) is int for n in span):
        return span[0], span[1]
    return None
