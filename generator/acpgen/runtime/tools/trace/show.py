"""``python -m <package>.trace show TRACE``: the views of a trace, in text, HTML or
JSON.

Schema-independent: the package's ``trace`` module hands it how to fold a trace
(``SessionState.from_lines``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...session.fold import Folded, TraceCall, TraceProblems, to_json
from .html_view import page
from .text_view import peers, skipped_text, text_peers, text_session

Fold = Callable[[Iterable[str], TraceProblems, list[TraceCall]], Mapping[str, Any]]
"""Reads a trace's lines into session id -> state (``SessionState.from_lines``), the
lines it cannot read and the calls about no session (``initialize``) aside."""


def main(argv: Sequence[str] | None, fold: Fold, prog: str) -> int:
    """``show TRACE [--session ID] [--format text|html|json] [--output FILE]``: exit
    0; 1 for a file that holds no message; 2 for one that cannot be read, or a session
    it does not hold."""
    args = _parser(prog).parse_args(argv)
    problems, others = TraceProblems(), list[TraceCall]()
    read = [0]

    def counted(lines: Iterable[str]) -> Iterator[str]:
        for line in lines:
            read[0] += 1
            yield line

    try:
        with args.trace.open(encoding="utf-8", errors="replace") as lines:
            states = {
                k: v.wire for k, v in fold(counted(lines), problems, others).items()
            }
    except OSError as error:
        print(
            f"{prog}: error: cannot read {args.trace}: {error.strerror}",
            file=sys.stderr,
        )
        return 2
    if not states and not others:  # not a trace (a script, an empty file)
        print(
            f"{prog}: {args.trace} holds no ACP message ({read[0]} line"
            f"{'s' * (read[0] != 1)} read): a trace is the JSON lines written with "
            "trace= or ACP_TRACE",
            file=sys.stderr,
        )
        return 1
    if args.session is not None:
        if args.session not in states:
            known = ", ".join(states) or "none"
            print(
                f"{prog}: error: no session {args.session!r} in the trace "
                f"(sessions: {known})",
                file=sys.stderr,
            )
            return 2
        states = {args.session: states[args.session]}
    text = render(states, args.format, problems, others)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Read a wire trace of ACP.")
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser(
        "show", help="print the sessions of a trace, in text, HTML or JSON"
    )
    show.add_argument(
        "trace", type=Path, help="a trace written with trace= or ACP_TRACE"
    )
    show.add_argument("--session", help="only this session (by id)")
    show.add_argument("--format", choices=("text", "html", "json"), default="text")
    show.add_argument(
        "--output", type=Path, help="write to this file (default: stdout)"
    )
    return parser


def render(
    states: Mapping[str, Folded],
    form: str,
    problems: TraceProblems | None = None,
    others: Sequence[TraceCall] = (),
) -> str:
    """The sessions as a view in ``form`` (``text``, ``html`` or ``json``), with
    who spoke (the ``initialize`` among ``others``, the calls about no session)."""
    skipped = list(problems.lines) if problems is not None else []
    if form == "json":
        data = {
            "connection": [_call_json(c) for c in others],
            "sessions": [to_json(s, times=True) for s in states.values()],
            "unreadLines": skipped,
        }
        return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    if form == "html":
        return page(states, skipped, others)
    sessions = "".join(text_session(s) for s in states.values())
    return text_peers(peers(others)) + sessions + skipped_text(skipped)


def _call_json(call: TraceCall) -> dict[str, Any]:
    return {
        "method": call.method,
        "params": call.params,
        "result": call.result,
        "error": call.error,
        "answered": call.answered,
        "askedAt": call.asked_at,
        "at": call.at,
    }
