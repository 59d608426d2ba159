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
- **message union**: one ``validate_json`` per line of the union of the agent's messages: ours
  the generated ``AgentOutgoingMessage`` (keyed by method in pydantic-core), theirs
  ``AgentRequest | AgentResponse | AgentNotification`` of the SDK; ours also against our
  method-known reading (target: within 1.2x).
- **one pass per line**: ours ``MessageReader(AgentOutgoingMessage, ProtocolLevelMessage)``, the
  reading entry point for the runtime (one pydantic-core call from the bytes, the envelope and
  the method's params model, lone surrogates read as the runtime's decoder reads them), against
  the SDK's method-known reading (target: at most 0.75x its time) and against pydantic-core's bare
  ``from_json`` of the same lines, which builds no model (target: within 1.3x).
- **unknown members**: our method-known reading against the same with every model dropping the
  members the schema does not name (``bench.ignoring``): what keeping them costs (at most 5%).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import from_json

from bench.corpus import Transcript, load_turn
from bench.figures import Figure
from bench.generated import bindings
from bench.ignoring import ignoring
from bench.timing import alternate

Validate = Callable[[Any], object]
REPEAT = 10
"""Turns read per round and contender."""


def ours_known(transcript: Transcript, package: Callable[[str], ModuleType] = bindings) -> Callable[[], None]:
    connection, dispatch, methods = (package(m) for m in ("connection", "dispatch", "methods"))
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
    return _union_reader(bindings("models").AgentOutgoingMessage, transcript.received)


def ours_one_pass(transcript: Transcript, package: Callable[[str], ModuleType] = bindings) -> Callable[[], None]:
    """Every line through the reading entry point, as a client's runtime would read it."""
    models, messages = package("models"), package("_messages")
    read_line = messages.MessageReader(models.AgentOutgoingMessage, models.ProtocolLevelMessage)
    lines = transcript.received

    def read() -> None:
        for line in lines:
            read_line(line)

    return read


def bare_from_json(transcript: Transcript) -> Callable[[], None]:
    """pydantic-core's JSON reader alone: Python values, no model."""
    lines = transcript.received

    def read() -> None:
        for line in lines:
            from_json(line)

    return read


def theirs_union(transcript: Transcript) -> Callable[[], None]:
    import acp.schema as sdk

    return _union_reader(sdk.AgentRequest | sdk.AgentResponse | sdk.AgentNotification, transcript.received)


def t1(rounds: int) -> list[Figure]:
    """Messages per second reading the turn, method known and through the message union; then our
    keyed union, one pass per line and the cost of keeping unknown members against their floors."""
    transcript = load_turn()
    count, size = len(transcript.received), sum(map(len, transcript.received)) / 1e6
    contenders = {
        "ours-known": ours_known(transcript),
        "theirs-known": theirs_known(transcript),
        "ours-union": ours_union(transcript),
        "theirs-union": theirs_union(transcript),
        "ours-one-pass": ours_one_pass(transcript),
        "from-json": bare_from_json(transcript),
        "ours-known-ignoring": ours_known(transcript, ignoring),
        "ours-one-pass-ignoring": ours_one_pass(transcript, ignoring),
    }
    medians = alternate(contenders, rounds, REPEAT)
    ms = {name: seconds / REPEAT * 1000 for name, seconds in medians.items()}
    return _rates(ms, count, f"{count} msgs, {size:.2f} MB") + _floors(ms)


def _rates(ms: dict[str, float], count: int, turn: str) -> list[Figure]:
    rate = {name: count / (value / 1000) for name, value in ms.items()}
    known = rate["ours-known"] / rate["theirs-known"]
    union = rate["ours-union"] / rate["theirs-union"]
    return [
        Figure(f"T1 read the turn, method known ({turn})", rate["ours-known"], rate["theirs-known"], "msg/s",
               ">= 2.0x", known >= 2.0, f"{ms['ours-known']:.1f} vs {ms['theirs-known']:.1f} ms per turn"),
        Figure("T1 read the turn through the message union", rate["ours-union"], rate["theirs-union"],
               "msg/s", ">= 2.0x", union >= 2.0,
               f"{ms['ours-union']:.1f} vs {ms['theirs-union']:.1f} ms per turn; ours: AgentOutgoingMessage"),
    ]  # fmt: skip


def _floors(ms: dict[str, float]) -> list[Figure]:
    def ratio(ours: str, reference: str, target: float, name: str, note: str) -> Figure:
        met = ms[ours] / ms[reference] <= target
        return Figure(name, ms[ours], ms[reference], "ms/turn", f"<= {target}x", met, note)

    return [
        ratio("ours-union", "ours-known", 1.2, "T1 our keyed message union vs our method-known reading",
              "AgentOutgoingMessage, one validate_json per line; reference: decode + the method's validator"),
        ratio("ours-one-pass", "theirs-known", 0.75, "T1 one pass per line (MessageReader) vs the SDK, method known",
              "reference: json.loads + model_validate of the method's model"),
        ratio("ours-one-pass", "from-json", 1.3, "T1 one pass per line (MessageReader) vs bare from_json",
              "reference: pydantic-core's from_json of each line, no model built"),
        ratio("ours-known", "ours-known-ignoring", 1.05,
              "T1 method known: models keeping unknown members vs dropping them",
              "reference: the same bindings with extra='ignore' (bench.ignoring)"),
        ratio("ours-one-pass", "ours-one-pass-ignoring", 1.05,
              "T1 one pass per line: models keeping unknown members vs dropping them",
              "reference: the same bindings with extra='ignore' (bench.ignoring)"),
    ]  # fmt: skip
