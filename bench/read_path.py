"""T1: the realistic turn read as its client receives it, ours against the official Python SDK.

Every line the client reads (``bench/corpus/turn/agent-to-client.ndjson``), in arrival order:
decode it, find its method (for a response, the method of the pending request it answers) and
validate its params (or result) as that method's model. The ways to read it:

- **as the runtimes read it** (method known). Ours: the functions the runtime runs on each line,
  in its order: ``wire.messages.read_message`` (the connection's reading step: ``codec.decode``, which
  is pydantic-core's JSON reader refusing NaN and nesting past the depth limit, and the envelope
  checks), then for a request or notification the params model's pydantic-core validator that the
  dispatcher reads it with, for the answer to our ``session/prompt`` the result model's that the
  sender reads it with (both the process's shared adapters, ``adapters.built``). Theirs: ``json.loads`` as
  ``NdjsonTransport.receive`` does, then ``model.model_validate(params)`` with the model that
  ``acp.client.router.build_client_router`` routes the method to, and
  ``PromptResponse.model_validate`` for the answer, as ``request_model`` does. Targets: at most
  0.75x the SDK's time, and within 1.3x of pydantic-core's bare ``from_json`` of the same lines
  (which builds no model). For scale: the same validation of the already decoded lines, without
  JSON, against ``from_json``: what building the models costs on its own.
- **message union**: one ``validate_json`` per line of the union of the agent's messages: ours
  the generated ``AgentOutgoingMessage`` (keyed by method in pydantic-core), theirs
  ``AgentRequest | AgentResponse | AgentNotification`` of the SDK; ours also against our
  method-known reading (target: within 1.2x).
- **one pass per line**: ours ``MessageReader(AgentOutgoingMessage, ProtocolLevelMessage)`` (one
  pydantic-core call from the bytes, the envelope and the method's params model, lone
  surrogates read as the runtime's decoder reads them), against the SDK's method-known reading
  and against bare ``from_json``. ``validate_json`` reads NaN and the infinities wherever a value
  is untyped (``_meta``, unknown members), which JSON has not and the runtime answers -32700;
  so, for the runtime, also the same one pass after a search of the line for ``NaN`` and
  ``Infinity`` (what refusing them exactly costs without a second parse), against the
  runtime's read.
- **unknown members**: our method-known reading against the same with every model dropping the
  members the schema does not name (``bench.ignoring``): what keeping them costs (at most 5%).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

from pydantic import GetCoreSchemaHandler, TypeAdapter
from pydantic_core import core_schema, from_json

from bench.corpus import Transcript, load_turn
from bench.figures import Figure
from bench.generated import bindings
from bench.ignoring import ignoring
from bench.timing import alternate

Validate = Callable[[Any], object]
REPEAT = 10
"""Turns read per round and contender."""


def ours_known(transcript: Transcript, package: Callable[[str], ModuleType] = bindings) -> Callable[[], None]:
    """Every line as the runtime reads it: the connection's reading step, then the dispatcher's
    route for the method (or the sender's result validator for the answer)."""
    names = ("_runtime.wire.messages", "_runtime.connection.adapters", "methods")
    messages, adapters, methods = (package(m) for m in names)
    routes: dict[str, Validate] = {  # the dispatcher's validator of each method's params
        spec.wire: adapters.built(spec.params).validator.validate_python
        for spec in methods.handled_by("client", "both")
    }
    by_wire = {spec.wire: spec for spec in methods.METHODS}
    answers: dict[Any, Validate] = {  # the sender's validator of each request's result
        request_id: adapters.built(by_wire[method].result).validator.validate_python
        for request_id, method in transcript.pending().items()
    }
    read_line, depth, lines = messages.read_message, package("connection").Limits().max_depth, transcript.received

    def read() -> None:
        for line in lines:
            message = read_line(line, depth)
            if "method" in message:
                routes[message["method"]](message["params"])
            else:
                answers[message["id"]](message["result"])

    return read


def ours_validation(transcript: Transcript) -> Callable[[], None]:
    """Our validation alone, of the already decoded lines: what building the models costs."""
    adapters, methods = bindings("_runtime.connection.adapters"), bindings("methods")
    routes = {
        spec.wire: adapters.built(spec.params).validator.validate_python
        for spec in methods.handled_by("client", "both")
    }
    by_wire = {spec.wire: spec for spec in methods.METHODS}
    pending = transcript.pending()
    work: list[tuple[Validate, Any]] = []
    for line in transcript.received:
        message = json.loads(line)
        if "method" in message:
            work.append((routes[message["method"]], message["params"]))
        else:
            work.append((TypeAdapter(by_wire[pending[message["id"]]].result).validate_python, message["result"]))

    def read() -> None:
        for validate, value in work:
            validate(value)

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


def ours_one_pass(
    transcript: Transcript, package: Callable[[str], ModuleType] = bindings, *, exact: bool = False
) -> Callable[[], None]:
    """Every line through the reading entry point, in one pydantic-core call; ``exact``: only
    after a search of the line for ``NaN`` and ``Infinity`` (a line that has either would be
    parsed again, by the runtime's decoder, which refuses them: the turn has none)."""
    models, messages = package("models"), package("connection")
    read_line = messages.MessageReader(models.AgentOutgoingMessage, models.ProtocolLevelMessage)
    lines = transcript.received

    def read() -> None:
        for line in lines:
            read_line(line)

    def read_exactly() -> None:
        for line in lines:
            if b"NaN" in line or b"Infinity" in line:
                raise AssertionError("the turn has no NaN")
            read_line(line)

    return read_exactly if exact else read


class _Keyed:
    """The runtime's routes as one pydantic-core union keyed by ``method``: each method's
    envelope a typed dict (``jsonrpc``, ``id`` and unknown members kept as they are) whose
    ``params`` is read as the method's model; what no route keys (a response) read as JSON."""

    def __init__(self, specs: list[Any]) -> None:
        self._specs = specs

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        envelopes: dict[Any, core_schema.CoreSchema] = {
            spec.wire: core_schema.typed_dict_schema(
                {
                    "method": core_schema.typed_dict_field(core_schema.str_schema()),
                    "params": core_schema.typed_dict_field(handler.generate_schema(spec.params), required=False),
                },
                extra_behavior="allow",
            )
            for spec in self._specs
        }
        keyed = core_schema.tagged_union_schema(envelopes, "method")
        return core_schema.union_schema([keyed, core_schema.any_schema()], mode="left_to_right")


def keyed_one_pass(transcript: Transcript, *, exact: bool) -> Callable[[], None]:
    """The fastest one pass per line we built for the runtime (``_Keyed``: one ``validate_json``
    per line, the answer's result then read by its type); ``exact``: after the search of the line
    for ``NaN`` and ``Infinity`` that refusing them, as the runtime does, would need."""
    methods, adapters = bindings("methods"), bindings("_runtime.connection.adapters")
    keyed: TypeAdapter[Any] = TypeAdapter(_Keyed(list(methods.handled_by("client", "both"))))
    validate = keyed.validator.validate_json
    by_wire = {spec.wire: spec for spec in methods.METHODS}
    answers = {i: adapters.built(by_wire[m].result).validator.validate_python for i, m in transcript.pending().items()}
    lines = transcript.received

    def read() -> None:
        for line in lines:
            if exact and (b"NaN" in line or b"Infinity" in line):
                raise AssertionError("the turn has no NaN")
            message = validate(line)
            if "result" in message:
                answers[message["id"]](message["result"])

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
    """Reading the turn as the runtimes read it, and through the message union; then our keyed
    union, one pass per line and the cost of keeping unknown members against their floors."""
    transcript = load_turn()
    count, size = len(transcript.received), sum(map(len, transcript.received)) / 1e6
    contenders = {
        "ours-known": ours_known(transcript),
        "theirs-known": theirs_known(transcript),
        "ours-union": ours_union(transcript),
        "theirs-union": theirs_union(transcript),
        "ours-one-pass": ours_one_pass(transcript),
        "ours-one-pass-exact": ours_one_pass(transcript, exact=True),
        "ours-validation": ours_validation(transcript),
        "keyed-one-pass": keyed_one_pass(transcript, exact=False),
        "keyed-one-pass-exact": keyed_one_pass(transcript, exact=True),
        "from-json": bare_from_json(transcript),
        "ours-known-ignoring": ours_known(transcript, ignoring),
        "ours-one-pass-ignoring": ours_one_pass(transcript, ignoring),
    }
    medians = alternate(contenders, rounds, REPEAT)
    ms = {name: seconds / REPEAT * 1000 for name, seconds in medians.items()}
    return _rates(ms, count, f"{count} msgs, {size:.2f} MB") + _floors(ms)


def _rates(ms: dict[str, float], count: int, turn: str) -> list[Figure]:
    rate = {name: count / (value / 1000) for name, value in ms.items()}
    union = rate["ours-union"] / rate["theirs-union"]
    return [
        Figure(f"T1 read the turn as the runtimes read it ({turn})", rate["ours-known"], rate["theirs-known"],
               "msg/s", "-", True, f"{ms['ours-known']:.2f} vs {ms['theirs-known']:.2f} ms per turn"),
        Figure("T1 read the turn through the message union", rate["ours-union"], rate["theirs-union"],
               "msg/s", ">= 2.0x", union >= 2.0,
               f"{ms['ours-union']:.1f} vs {ms['theirs-union']:.1f} ms per turn; ours: AgentOutgoingMessage"),
    ]  # fmt: skip


def _floors(ms: dict[str, float]) -> list[Figure]:
    def ratio(ours: str, reference: str, target: float | None, name: str, note: str) -> Figure:
        met = target is None or ms[ours] / ms[reference] <= target
        return Figure(name, ms[ours], ms[reference], "ms/turn", "-" if target is None else f"<= {target}x", met, note)

    return [
        ratio("ours-known", "theirs-known", 0.75, "T1 the runtime's read of the turn vs the SDK's",
              "ours: wire.messages.read_message + the dispatcher's route; reference: json.loads + model_validate"),
        ratio("ours-known", "from-json", 1.3, "T1 the runtime's read of the turn vs bare from_json",
              "reference: pydantic-core's from_json of each line, no model built"),
        ratio("ours-validation", "from-json", None, "T1 validation alone (decoded lines) vs bare from_json",
              "building the models, without JSON: the floor under the runtime's read, whatever its passes"),
        ratio("ours-union", "ours-known", 1.2, "T1 our keyed message union vs the runtime's read",
              "AgentOutgoingMessage, one validate_json per line"),
        ratio("ours-one-pass", "theirs-known", 0.75, "T1 one pass per line (MessageReader) vs the SDK, method known",
              "reference: json.loads + model_validate of the method's model; NaN read in untyped members"),
        ratio("ours-one-pass", "from-json", 1.3, "T1 one pass per line (MessageReader) vs bare from_json",
              "reference: pydantic-core's from_json of each line, no model built"),
        ratio("ours-one-pass-exact", "ours-known", None, "T1 one pass, NaN refused by a search, vs the runtime's read",
              "MessageReader after `b'NaN' in line or b'Infinity' in line`; reference: the runtime's two steps"),
        ratio("keyed-one-pass", "ours-known", None, "T1 one pass keyed by the runtime's routes vs the runtime's read",
              "one validate_json per line (bench.read_path._Keyed); NaN read in untyped members"),
        ratio("keyed-one-pass-exact", "ours-known", None, "T1 the same, NaN refused by a search, vs the runtime's read",
              "the keyed one pass after `b'NaN' in line or b'Infinity' in line`"),
        ratio("ours-known", "ours-known-ignoring", 1.05,
              "T1 method known: models keeping unknown members vs dropping them",
              "reference: the same bindings with extra='ignore' (bench.ignoring)"),
        ratio("ours-one-pass", "ours-one-pass-ignoring", 1.05,
              "T1 one pass per line: models keeping unknown members vs dropping them",
              "reference: the same bindings with extra='ignore' (bench.ignoring)"),
    ]  # fmt: skip
