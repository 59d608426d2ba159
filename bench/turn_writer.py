"""Write the realistic turn of the benchmark: one long agent turn, as its client receives it.

    uv run python -m bench.turn_writer [--check]

A coding agent answers one prompt (add retries to an HTTP client): it streams thoughts and
messages, updates its plan, reads files (some through the client's ``fs/read_text_file``),
searches, edits files behind permission requests (diffs of whole files), runs tests in client
terminals, reports usage, and ends the turn. The messages are built from a fixed seed and
written, one JSON message per line as on the wire, to ``bench/corpus/turn/``:

- ``agent-to-client.ndjson``: what the client reads, in arrival order;
- ``client-to-agent.ndjson``: what the client writes (the prompt, then its answers).

``--check`` exits 1 when the committed files differ from what this script writes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from bench import source_text, turn_prose
from bench.source_text import chunks, numbered

TURN = Path(__file__).resolve().parent / "corpus" / "turn"
FILES = {"agent-to-client": "agent-to-client.ndjson", "client-to-agent": "client-to-agent.ndjson"}
SEED = 16
SESSION = "0199c2a4-6f1e-7b3d-9a52-4c8e1f0d2b67"
ROOT = "/home/mira/src/harbor"
PROMPT_ID = 2
"""The client's ``session/prompt`` request id (``initialize`` was 0, ``session/new`` 1)."""
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class Turn:
    """The two directions of the turn, built message by message."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.incoming: list[dict[str, Any]] = []
        self.outgoing: list[dict[str, Any]] = []
        self._next_id = 0
        self.tokens = 18_000

    def ident(self, prefix: str, length: int) -> str:
        return prefix + "".join(_ALPHABET[self.rng.randrange(62)] for _ in range(length))

    def update(self, session_update: str, /, **fields: Any) -> None:
        update = {"sessionUpdate": session_update, **fields}
        params = {"sessionId": SESSION, "update": update}
        self.incoming.append({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def ask(self, method: str, params: dict[str, Any], answer: dict[str, Any]) -> None:
        """A request of the agent to the client, and the client's answer."""
        request_id, self._next_id = self._next_id, self._next_id + 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"sessionId": SESSION, **params}}
        self.incoming.append(message)
        self.outgoing.append({"jsonrpc": "2.0", "id": request_id, "result": answer})

    def say(self, kind: str, text: str) -> None:
        """Stream ``text`` as ``agent_thought_chunk`` or ``agent_message_chunk`` updates."""
        message_id = self.ident("msg_01", 20)
        for piece in chunks(self.rng, text):
            self.update(kind, content={"type": "text", "text": piece}, messageId=message_id)

    def usage(self, grown: int, cost: bool = False) -> None:
        self.tokens += grown
        extra = {"cost": {"amount": round(self.tokens * 4.1e-6, 4), "currency": "USD"}} if cost else {}
        self.update("usage_update", used=self.tokens, size=200_000, **extra)

    def plan(self, done: int) -> None:
        statuses = ["completed"] * done + ["in_progress"] + ["pending"] * len(turn_prose.PLAN)
        entries = [
            {"content": content, "priority": priority, "status": status}
            for (content, priority), status in zip(turn_prose.PLAN, statuses, strict=False)
        ]
        self.update("plan", entries=entries)


def _meta(tool: str) -> dict[str, Any]:
    return {"_meta": {"claudeCode": {"toolName": tool}}}


def read_file(turn: Turn, path: str, text: str, *, via_client: bool) -> None:
    """A read tool call; the agent reads through the client when ``via_client``."""
    call = turn.ident("toolu_01", 22)
    location = [{"path": f"{ROOT}/{path}", "line": 1}]
    turn.update("tool_call", toolCallId=call, title=f"Read {path}", kind="read", status="pending",
                locations=location, rawInput={"file_path": f"{ROOT}/{path}"}, **_meta("Read"))  # fmt: skip
    if via_client:
        turn.ask("fs/read_text_file", {"path": f"{ROOT}/{path}"}, {"content": text})
    shown = {"type": "content", "content": {"type": "text", "text": f"```\n{numbered(text)}\n```"}}
    turn.update("tool_call_update", toolCallId=call, status="completed", content=[shown])


def search(turn: Turn, pattern: str, files: tuple[str, ...], hits: int) -> None:
    call = turn.ident("toolu_01", 22)
    command = f"grep -rn '{pattern}' src tests"
    turn.update("tool_call", toolCallId=call, title=f"`{command}`", kind="search", status="pending",
                rawInput={"pattern": pattern, "path": ROOT, "output_mode": "content"}, **_meta("Grep"))  # fmt: skip
    found = source_text.grep_output(turn.rng, files, pattern, hits)
    shown = {"type": "content", "content": {"type": "text", "text": found}}
    turn.update("tool_call_update", toolCallId=call, status="completed", content=[shown],
                rawOutput={"numLines": hits, "mode": "content"})  # fmt: skip


def edit_file(turn: Turn, path: str, old: str | None, new: str) -> None:
    """An edit (or a new file when ``old`` is None), allowed by the user through the client."""
    call, absolute = turn.ident("toolu_01", 22), f"{ROOT}/{path}"
    title = f"Write {path}" if old is None else f"Edit {path}"
    diff = [{"type": "diff", "path": absolute, "oldText": old, "newText": new}]
    where = [{"path": absolute, "line": 1 + turn.rng.randrange(max(1, new.count("\n")))}]
    raw = {"file_path": absolute, "content" if old is None else "new_string": new[:400]}
    tool = {"toolCallId": call, "title": title, "kind": "edit", "status": "pending", "content": diff}
    turn.update("tool_call", **tool, locations=where, rawInput=raw, **_meta("Write" if old is None else "Edit"))
    options = [
        {"optionId": "allow_always", "name": "Always allow edits this session", "kind": "allow_always"},
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    outcome = {"outcome": {"outcome": "selected", "optionId": "allow"}}
    turn.ask("session/request_permission", {"toolCall": {**tool, "locations": where}, "options": options}, outcome)
    turn.update("tool_call_update", toolCallId=call, status="in_progress")
    turn.update("tool_call_update", toolCallId=call, status="completed", title=title.replace("Write", "Wrote"))


def run(turn: Turn, command: list[str], output: str, exit_code: int) -> None:
    """A command run in a client terminal, polled, awaited and released."""
    call, terminal = turn.ident("toolu_01", 22), turn.ident("term_", 8).lower()
    line = " ".join(command)
    create = {"command": command[0], "args": command[1:], "cwd": ROOT, "outputByteLimit": 1_048_576}
    turn.ask("terminal/create", create, {"terminalId": terminal})
    shown_terminal = {"type": "terminal", "terminalId": terminal}
    turn.update("tool_call", toolCallId=call, title=f"`{line}`", kind="execute", status="in_progress",
                content=[shown_terminal], rawInput={"command": line, "timeout": 600000}, **_meta("Bash"))  # fmt: skip
    ref = {"terminalId": terminal}
    turn.ask("terminal/output", ref, {"output": output[: len(output) // 3], "truncated": False})
    turn.ask("terminal/wait_for_exit", ref, {"exitCode": exit_code, "signal": None})
    final = {"output": output, "truncated": False, "exitStatus": {"exitCode": exit_code, "signal": None}}
    turn.ask("terminal/output", ref, final)
    text = {"type": "content", "content": {"type": "text", "text": f"```console\n{output}```"}}
    raw = {"stdout": output, "stderr": "", "exit_code": exit_code, "interrupted": False}
    status = "completed" if exit_code == 0 else "failed"
    turn.update("tool_call_update", toolCallId=call, status=status, content=[shown_terminal, text], rawOutput=raw)
    turn.ask("terminal/release", ref, {})


SOURCES = (  # path, docstring, functions; read in this order
    ("src/harbor/transport.py", "HTTP transport: one pooled session per client.", 78),
    ("src/harbor/upload.py", "Multipart uploads of large objects.", 34),
    ("src/harbor/client.py", "The public client: buckets, objects and listings.", 60),
    ("src/harbor/errors.py", "Errors raised by harbor.", 5),
    ("src/harbor/auth.py", "Request signing and credential refresh.", 20),
    ("tests/test_transport.py", "Tests of the transport.", 24),
)
READ_BY_CLIENT = frozenset({"src/harbor/transport.py", "src/harbor/errors.py", "tests/test_transport.py"})
"""The files the agent reads through the client's ``fs/read_text_file`` (the others, itself)."""


def explore(turn: Turn, sources: dict[str, str]) -> None:
    """From the first thoughts to the plan that follows the reading."""
    turn.update("session_info_update", title=turn_prose.TITLE, updatedAt="2025-11-24T09:41:07Z")
    commands = [
        {"name": name, "description": text, **({"input": {"hint": hint}} if hint else {})}
        for name, text, hint in turn_prose.COMMANDS
    ]
    turn.update("available_commands_update", availableCommands=commands)
    turn.say("agent_thought_chunk", turn_prose.THOUGHTS["start"])
    turn.plan(0)
    turn.say("agent_message_chunk", turn_prose.MESSAGES["start"])
    for path in list(sources)[:3]:
        read_file(turn, path, sources[path], via_client=path in READ_BY_CLIENT)
    search(turn, "raise_for_status", tuple(sources), 60)
    search(turn, "Retry-After", tuple(sources), 12)
    for path in list(sources)[3:]:
        read_file(turn, path, sources[path], via_client=path in READ_BY_CLIENT)
    turn.usage(23_411)
    turn.say("agent_thought_chunk", turn_prose.THOUGHTS["after-reading"])
    turn.plan(1)
    turn.say("agent_message_chunk", turn_prose.MESSAGES["plan"])


def change(turn: Turn, files: dict[str, str], rng: random.Random, path: str, added: int) -> None:
    """Edit ``path`` by adding ``added`` functions."""
    old, files[path] = files[path], source_text.revise(rng, files[path], added)
    edit_file(turn, path, old, files[path])


def implement(turn: Turn, sources: dict[str, str], rng: random.Random) -> dict[str, str]:
    """The new module, the edits and the tests; returns the files as they end up."""
    files = dict(sources)
    files["src/harbor/retry.py"] = source_text.module(rng, "Retry policy: backoff, jitter, Retry-After.", 16)
    edit_file(turn, "src/harbor/retry.py", None, files["src/harbor/retry.py"])
    turn.plan(2)
    for path, added in (("src/harbor/transport.py", 3), ("src/harbor/upload.py", 1), ("src/harbor/client.py", 1)):
        change(turn, files, rng, path, added)
        turn.usage(6_120)
    turn.plan(4)
    turn.say("agent_message_chunk", turn_prose.MESSAGES["tests"])
    files["tests/test_retry.py"] = source_text.module(rng, "Tests of the retry policy and the transport.", 20)
    edit_file(turn, "tests/test_retry.py", None, files["tests/test_retry.py"])
    change(turn, files, rng, "tests/test_transport.py", 2)
    return files


def verify(turn: Turn, files: dict[str, str], rng: random.Random) -> None:
    """Two failing runs and their fixes, then the suite, ruff and mypy passing."""
    modules = ("transport", "upload", "retry", "errors", "client", "auth")
    first, second = "tests/test_retry.py::test_attempts_count_the_first_try", "tests/test_retry.py::test_no_rewind"
    pytest = ["uv", "run", "pytest", "-v"]
    run(turn, pytest, source_text.pytest_output(rng, modules, 212, (first, second)), 1)
    turn.usage(9_870)
    turn.say("agent_thought_chunk", turn_prose.THOUGHTS["after-failure"])
    turn.say("agent_message_chunk", turn_prose.MESSAGES["failure"])
    change(turn, files, rng, "src/harbor/retry.py", 1)
    run(turn, pytest, source_text.pytest_output(rng, modules, 212, (second,)), 1)
    turn.usage(2_514)
    turn.say("agent_thought_chunk", turn_prose.THOUGHTS["second-failure"])
    change(turn, files, rng, "src/harbor/transport.py", 1)
    turn.say("agent_message_chunk", turn_prose.MESSAGES["second-failure"])
    run(turn, pytest, source_text.pytest_output(rng, modules, 212, ()), 0)
    turn.usage(2_107)
    run(turn, ["uv", "run", "ruff", "check", "src", "tests"], "All checks passed!\n", 0)
    mypy = "Success: no issues found in 31 source files\n"
    run(turn, ["uv", "run", "mypy", "--strict", "src"], mypy, 0)
    turn.usage(4_315)


def conclude(turn: Turn) -> None:
    turn.say("agent_thought_chunk", turn_prose.THOUGHTS["before-summary"])
    turn.plan(len(turn_prose.PLAN))
    turn.say("agent_message_chunk", turn_prose.MESSAGES["summary"])
    turn.usage(3_902, cost=True)
    turn.incoming.append({"jsonrpc": "2.0", "id": PROMPT_ID, "result": {"stopReason": "end_turn"}})


def build(seed: int = SEED) -> Turn:
    """The whole turn (the same for the same seed)."""
    turn = Turn(seed)
    rng = random.Random(seed + 1)  # the texts: independent of how many ids the messages drew
    sources = {path: source_text.module(rng, title, functions) for path, title, functions in SOURCES}
    prompt = {"sessionId": SESSION, "prompt": [{"type": "text", "text": turn_prose.PROMPT}]}
    turn.outgoing.append({"jsonrpc": "2.0", "id": PROMPT_ID, "method": "session/prompt", "params": prompt})
    explore(turn, sources)
    files = implement(turn, sources, rng)
    verify(turn, files, rng)
    conclude(turn)
    return turn


def lines(messages: list[dict[str, Any]]) -> bytes:
    """Messages as the wire carries them: compact JSON in UTF-8, one per line."""
    return b"".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for m in messages)


def rendered() -> dict[str, bytes]:
    turn = build()
    return {FILES["agent-to-client"]: lines(turn.incoming), FILES["client-to-agent"]: lines(turn.outgoing)}


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.turn_writer", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed files are stale")
    args = parser.parse_args()
    stale = []
    for name, data in rendered().items():
        path = TURN / name
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        count = data.count(b"\n")
        print(f"{path.relative_to(TURN.parents[2])}: {count} messages, {len(data):,} bytes")
    if stale:
        print(f"stale: {', '.join(stale)}; run `uv run python -m bench.turn_writer`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
