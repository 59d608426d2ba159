"""A stdio agent without bindings that streams notifications, then answers (issue 47, the order tests).

It writes its lines with the standard library only, so what the client sees is what the transport
carries, not what a runtime on this side ordered. For every request of ``STREAMED`` it first writes
``params._meta.order.count`` ``session/update`` notifications of the request's session (agent message
chunks whose texts are ``<tag>:0``, ``<tag>:1``... with ``tag`` from the same ``_meta``), then
answers. Without a session (the ``_order/ext`` extension request), the notifications name the session
of ``params.session``.

``session/prompt`` streams 2,000 chunks (``turn:0``, ``turn:1``...) at once and never answers: a turn
that runs until the agent is killed (``tests/runtime/test_relay_killed.py``).

The other direction: ``_order/ask`` sends the client a request (``_order/call``, or
``session/request_permission`` with ``params.sessionId`` when ``params.kind`` is ``"permission"``),
counts the ``_order/note`` notifications that arrive before the client's answer, and answers the ask
with ``{"notes": <that count>}``.

Run: ``python tests/support/peers/order_stdio_agent.py``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

STREAMED = {
    "session/load": {},
    "session/resume": {},
    "session/set_mode": {},
    "session/set_config_option": {"configOptions": []},
    "_order/ext": {"streamed": True},
}
INITIALIZE = {
    "protocolVersion": 1,
    "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"resume": {}}},
}


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id: Any, result: Any) -> None:
    write({"jsonrpc": "2.0", "id": request_id, "result": result})


def stream(session: str, tag: str, count: int) -> None:
    for n in range(count):
        content = {"type": "text", "text": f"{tag}:{n}"}
        update = {"sessionUpdate": "agent_message_chunk", "content": content}
        params = {"sessionId": session, "update": update}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}) + "\n")
    sys.stdout.flush()


def ask(params: dict[str, Any], number: int) -> dict[str, Any]:
    """The request ``_order/ask`` makes of the client."""
    if params.get("kind") == "permission":
        options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
        tool_call = {"toolCallId": f"call-{number}", "title": "count the notes"}
        asked = {"sessionId": params["sessionId"], "toolCall": tool_call, "options": options}
        return {"jsonrpc": "2.0", "id": f"ask-{number}", "method": "session/request_permission", "params": asked}
    return {"jsonrpc": "2.0", "id": f"ask-{number}", "method": "_order/call", "params": {}}


def main() -> None:
    sessions = asks = 0
    asking: dict[str, tuple[Any, int]] = {}
    """Our request's id -> (the id of the ``_order/ask`` it serves, notes counted so far)."""
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method == "_order/note":
            asking = {key: (ask_id, notes + 1) for key, (ask_id, notes) in asking.items()}
            continue
        if method is None:  # the client's answer to one of our requests
            ask_id, notes = asking.pop(message.get("id"), (None, 0))
            if ask_id is not None:
                answer(ask_id, {"notes": notes})
            continue
        if "id" not in message:
            continue
        request_id = message["id"]
        if method == "initialize":
            answer(request_id, INITIALIZE)
        elif method == "session/new":
            sessions += 1
            answer(request_id, {"sessionId": f"raw-{sessions}"})
        elif method in STREAMED:
            order = params.get("_meta", {}).get("order", {})
            session = params.get("sessionId", params.get("session"))
            stream(session, order.get("tag", method), int(order.get("count", 0)))
            answer(request_id, STREAMED[method])
        elif method == "session/prompt":
            stream(params["sessionId"], "turn", 2000)
        elif method == "_order/ask":
            asks += 1
            request = ask(params, asks)
            asking[request["id"]] = (request_id, 0)
            write(request)
        else:
            write({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
