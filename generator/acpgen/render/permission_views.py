"""Template data of ``permissions.py``: the permission request's and answer's models."""

from __future__ import annotations

from acpgen import ir

PERMISSION_METHOD = "session/request_permission"
PERMISSION_MEMBERS = ("sessionId", "toolCall", "options")


def permission_data(protocol: ir.Protocol) -> dict[str, object]:
    """What ``permissions.py`` is rendered from: the permission request's and answer's models,
    or why the package has none."""
    method = next((m for m in protocol.methods if m.wire == PERMISSION_METHOD and m.result), None)
    if method is None or method.result is None:
        reason = f"The schema ({protocol.source.file}) has no {PERMISSION_METHOD} request."
        return {"available": False, "reason": reason}
    request, response = protocol.type(method.params), protocol.type(method.result)
    missing = [name for name in PERMISSION_MEMBERS if name not in {f.wire for f in request.fields}]
    if missing or "outcome" not in {f.wire for f in response.fields}:
        reason = f"{request.wire} lacks {', '.join(missing) or 'an outcome in its answer'}: no policy can read it."
        return {"available": False, "reason": reason}
    return {"available": True, "reason": "", "request": request.class_name, "response": response.class_name}
