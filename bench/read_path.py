"""T1: the realistic turn read as its client receives it, ours against the official Python SDK.

Every line the client reads (``bench/corpus/turn/agent-to-client.ndjson``), in arrival order:
decode it, find its method (for a response, the method of the pending request it answers) and
validate its params (or result) as that method's model. Two ways to read it, each on both sides:

- **method known**, what the runtimes do. Ours: the connection's decoding (``decode``:
  pydantic-core's JSON reader, refusing NaN and nesting past its limit), then the dispatcher's route for the method
  (``_Route.read``: the params model's pydantic-core validator), and for the answer to our
  ``session/prompt`` the result model's validator, as the sender reads it. Theirs:
  ``json.loads`` as ``NdjsonTransport.receive`` does, then ``model.model_validate(params)`` with
  the model that ``acp.client.router.build_client_router`` routes the method to, and
  ``PromptResponse.model_validate`` for the answer, as ``request_model`` does.
- **message union**: one ``validate_json`` per line of the union of the agent's messages
  (``AgentRequest | AgentResponse | AgentNotification``), generated from the schema on both sides.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter

from bench.corpus import Transcript, load_turn
from bench.figures import Figure
from bench.generated import bindings
from bench.timing import alternate

Validate = Callable[[Any], object]
REPEAT = 10
"""Turns read per round and contender."""


def ours_known(transcript: Transcript) -> Callable[[], None]:
    connection, dispatch, methods = (bindings(m) for m in ("connection", "dispatch", "methods"))
    routes: dict[str, Validate] = {
        spec.wire: dispatch._Route(spec).read for spec in methods.handled_by("client", "both")
    }
    by_wire = {spec.wire: spec for spec in methods.METHODS}
    answers: dict[Any, Validate] = {
        request_id: TypeAdapter(by_wire[method].result).validate_python
        for request_id, method in transcript.pending().items()
    }
    decode, depth, lines = connection.decode, connection.Limits().max_depth, transcript.received

    def read() -> None:
        for line in lines:
            message = decode(line, depth)
            if "method" in message:
                routes[message["method"]](message["params"])
            else:
                answers[message["id"]](message["result"])

    return read


def theirs_known(transcript: Transcript) -> Callable[[], None]:
    import acp.schema as sdk

    routes: dict[str, Validate] = {  # the models acp.client.router.build_client_router validates with
        "session/update": sdk.SessionNotification.model_validate,
        "session/request_permission": sdk.RequestPermissionRequest.model_validate,
        "fs/read_text_file": sdk.ReadTextFileRequest.model_validate,
        "fs/write_text_file": sdk.WriteTextFileRequest.model_validate,
        "terminal/create": sdk.CreateTerminalRequest.model_validate,
        "terminal/output": sdk.TerminalOutputRequest.model_validate,
        "terminal/wait_for_exit": sdk.WaitForTerminalExitRequest.model_validate,
        "terminal/release": sdk.ReleaseTerminalRequest.model_validate,
        "terminal/kill": sdk.KillTerminalRequest.model_validate,
    }
    results = {"session/prompt": sdk.PromptResponse.model_validate}
    answers = {request_id: results[method] for request_id, method in transcript.pending().items()}
    lines = transcript.received

    def read() -> None:
        for line in lines:
            message = json.loads(line.strip())
            if "method" in message:
                routes[message["method"]](message["params"])
            else:
                answers[message["id"]](message["result"])

    return read


def _union_reader(union: Any, lines: tuple[bytes, ...]) -> Callable[[], None]:
    validate = TypeAdapter(union).validate_json

    def read() -> None:
        for line in lines:
            validate(line)

    return read


def ours_union(transcript: Transcript) -> Callable[[], None]:
    models = bindings("models")
    return _union_reader(models.AgentRequest | models.AgentResponse | models.AgentNotification, transcript.received)


def theirs_union(transcript: Transcript) -> Callable[[], None]:
    import acp.schema as sdk

    return _union_reader(sdk.AgentRequest | sdk.AgentResponse | sdk.AgentNotification, transcript.received)


def t1(rounds: int) -> list[Figure]:
    """Messages per second reading the turn, method known and through the message union."""
    transcript = load_turn()
    count, size = len(transcript.received), sum(map(len, transcript.received)) / 1e6
    contenders = {
        "ours-known": ours_known(transcript),
        "theirs-known": theirs_known(transcript),
        "ours-union": ours_union(transcript),
        "theirs-union": theirs_union(transcript),
    }
    medians = alternate(contenders, rounds, REPEAT)
    rate = {name: count * REPEAT / seconds for name, seconds in medians.items()}
    ms = {name: seconds / REPEAT * 1000 for name, seconds in medians.items()}
    turn = f"{count} msgs, {size:.2f} MB"
    known = rate["ours-known"] / rate["theirs-known"]
    union = rate["ours-union"] / rate["theirs-union"]
    return [
        Figure(f"T1 read the turn, method known ({turn})", rate["ours-known"], rate["theirs-known"], "msg/s",
               ">= 2.0x", known >= 2.0, f"{ms['ours-known']:.1f} vs {ms['theirs-known']:.1f} ms per turn"),
        Figure("T1 read the turn through the message union", rate["ours-union"], rate["theirs-union"],
               "msg/s", ">= 2.0x", union >= 2.0,
               f"{ms['ours-union']:.1f} vs {ms['theirs-union']:.1f} ms per turn; "
               f"ours: {rate['ours-union'] / rate['ours-known']:.2f}x our method-known reading"),
    ]  # fmt: skip
