"""Where the time of T1 and T2 goes: each stage of reading and sending the turn, timed alone.

    uv run --group bench python -m bench.breakdown [--rounds N] [--profile]

Prints milliseconds per turn (medians of alternating rounds) for each stage of both sides'
read and send paths, on the same realistic turn as T1 and T2, so that a missed target can be
traced to the stage that bounds it. ``--profile`` also prints the cProfile summary (the
functions with the most time of their own) of our read, send and round-trip paths and of the
SDK's.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import pstats
import tempfile
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import from_json

from bench import read_path, round_trip, send_path
from bench.corpus import Transcript, load_turn
from bench.generated import bindings
from bench.timing import alternate

REPEAT = 5


def _each(work: Callable[[Any], object], items: list[Any]) -> Callable[[], None]:
    def run() -> None:
        for item in items:
            work(item)

    return run


def _validators(transcript: Transcript) -> tuple[Callable[[Any], object], Callable[[Any], object]]:
    """Validation alone, of already decoded messages: ours (the dispatcher's routes), theirs."""
    adapters, methods = bindings("_runtime.connection.adapters"), bindings("methods")
    import acp.schema as sdk

    ours = {
        spec.wire: adapters.built(spec.params).validator.validate_python
        for spec in methods.handled_by("client", "both")
    }
    by_wire = {spec.wire: spec for spec in methods.METHODS}
    ours_answer = {i: TypeAdapter(by_wire[m].result).validate_python for i, m in transcript.pending().items()}
    theirs = {wire: getattr(sdk, name).model_validate for wire, name in send_path.SDK_PARAMS.items()}

    def ours_validate(message: dict[str, Any]) -> object:
        if "method" in message:
            return ours[message["method"]](message["params"])
        return ours_answer[message["id"]](message["result"])

    def theirs_validate(message: dict[str, Any]) -> object:
        if "method" in message:
            return theirs[message["method"]](message["params"])
        return sdk.PromptResponse.model_validate(message["result"])

    return ours_validate, theirs_validate


def read_stages(transcript: Transcript) -> dict[str, Callable[[], None]]:
    connection = bindings("connection")
    lines, messages = list(transcript.received), [json.loads(line) for line in transcript.received]
    ours_validate, theirs_validate = _validators(transcript)
    depth = connection.Limits().max_depth
    return {
        "read, ours: connection.decode (pydantic-core's reader, depth-limited)": _each(
            lambda b: connection.decode(b, depth), lines
        ),
        "read, ours: validate the decoded message": _each(ours_validate, messages),
        "read, theirs: json.loads": _each(lambda b: json.loads(b.strip()), lines),
        "read, theirs: validate the decoded message": _each(theirs_validate, messages),
        "read, for scale: pydantic_core.from_json (decode only)": _each(from_json, lines),
    }


def _models(transcript: Transcript) -> tuple[list[tuple[Any, Any]], list[Any]]:
    """The payload of every message as a model: ours (with its type), theirs."""
    import acp.schema as sdk

    by_wire = {spec.wire: spec for spec in bindings("methods").METHODS}
    adapters = {
        wire: (TypeAdapter(spec.params), spec.result and TypeAdapter(spec.result)) for wire, spec in by_wire.items()
    }
    pending, ours, theirs = transcript.pending(), [], []
    for message in (json.loads(line) for line in transcript.received):
        if "method" in message:
            adapter, payload = adapters[message["method"]][0], message["params"]
            theirs.append(getattr(sdk, send_path.SDK_PARAMS[message["method"]]).model_validate(payload))
        else:
            adapter, payload = adapters[pending[message["id"]]][1], message["result"]
            theirs.append(sdk.PromptResponse.model_validate(payload))
        ours.append((adapter, adapter.validate_python(payload)))
    return ours, theirs


def send_stages(transcript: Transcript) -> dict[str, Callable[[], None]]:
    from acp.utils import serialize_params

    connection, rpc = bindings("connection"), bindings("_runtime.wire.rpc")
    messages = [json.loads(line) for line in transcript.received]
    ours, theirs = _models(transcript)
    options = {"by_alias": True, "exclude_unset": True}
    encoded = [{"jsonrpc": "2.0", "id": 1, "result": rpc.to_json(a.serializer, m)} for a, m in ours]

    return {
        "send, ours: the payload model to JSON bytes (to_json, as the senders do)": _each(
            lambda pair: rpc.to_json(pair[0].serializer, pair[1]), ours
        ),
        "send, ours: connection.encode of the envelope around those bytes": _each(connection.encode, encoded),
        "send, theirs: dump the payload model (serialize_params)": _each(serialize_params, theirs),
        "send, theirs: json.dumps + encode of the dumped message": _each(send_path.sdk_line, messages),
        "send, for scale: our payload model to JSON bytes in one call (dump_json)": _each(
            lambda pair: pair[0].dump_json(pair[1], **options), ours
        ),
    }


def _summary(stats: pstats.Stats, title: str) -> str:
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(8)
    body = out.getvalue().split("\n\n", 2)[-1].rstrip()
    return f"--- {title} ---\n{body}"


def _profile(title: str, work: Callable[[], object], runs: int) -> str:
    profile = cProfile.Profile()
    profile.runcall(lambda: [work() for _ in range(runs)])
    return _summary(pstats.Stats(profile), f"{title} ({runs} runs)")


def profiles(transcript: Transcript) -> list[str]:
    out = [
        _profile("T1 ours, method known", read_path.ours_known(transcript), 20),
        _profile("T1 theirs, method known", read_path.theirs_known(transcript), 20),
        _profile("T2 ours, serialise", send_path.ours_serialise(transcript), 20),
        _profile("T2 theirs, serialise", send_path.theirs_serialise(transcript), 20),
    ]
    return out + round_trip_profiles()


def round_trip_profiles() -> list[str]:
    """Both processes of T3 (prompts), 1 and 64 in flight: the client here, the agent under cProfile."""
    out, loop = [], asyncio.new_event_loop()
    bursts = (("1 in flight", round_trip.one_at_a_time), ("64 in flight", round_trip.many_at_once))
    for side, connect in (("ours", round_trip.connect_ours), ("theirs", round_trip.connect_theirs)):
        with tempfile.TemporaryDirectory(prefix="acpgen-bench-profile-") as folder:
            agent_profile = f"{folder}/agent.prof"
            peer = loop.run_until_complete(connect(agent_profile))
            for label, burst in bursts:
                run = round_trip.running(loop, burst, peer.calls["prompt"])
                run()
                out.append(_profile(f"T3 {side}, {label}: the client process", run, 3))
            loop.run_until_complete(peer.close())
            title = f"T3 {side}: the agent process, over the whole session (both bursts, warm-up included)"
            out.append(_summary(pstats.Stats(agent_profile), title))
    loop.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.breakdown", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--profile", action="store_true", help="also print cProfile summaries")
    args = parser.parse_args()
    transcript = load_turn()
    stages = {**read_stages(transcript), **send_stages(transcript)}
    medians = alternate(stages, args.rounds, REPEAT)
    print(f"ms per turn ({len(transcript.received)} messages), medians of {args.rounds} alternating rounds")
    for name, seconds in medians.items():
        print(f"  {seconds / REPEAT * 1000:7.2f}  {name}")
    if args.profile:
        print("\n" + "\n\n".join(profiles(transcript)))


if __name__ == "__main__":
    main()
