"""The benchmark corpus: realistic ACP messages in ``bench/corpus/<group>/<NN>-<name>.json``,
and one realistic turn in ``bench/corpus/turn/``.

Each file of a group is ``{"def": <$defs type of the payload>, "message": <JSON-RPC message>,
"payload": "params" | "result"}``, the layout of the test corpus. The turn is two files of
newline-delimited JSON, one per direction, written by ``bench.turn_writer``.
``tests/generated/test_bench_corpus.py`` checks every message against the schema and round-trips it
through the models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus"
GROUPS = ("session-update", "session-prompt", "initialize-response")
TURN = CORPUS / "turn"


@dataclass(frozen=True, slots=True)
class Message:
    """One corpus message, with its payload as the JSON bytes a reader receives."""

    group: str
    name: str
    def_name: str
    message: dict[str, Any]
    payload_key: str

    @property
    def payload(self) -> Any:
        return self.message[self.payload_key]

    @property
    def payload_bytes(self) -> bytes:
        return json.dumps(self.payload, separators=(",", ":")).encode()


def load(group: str) -> list[Message]:
    """The messages of one group, in file order."""
    found = []
    for path in sorted((CORPUS / group).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found.append(Message(group, path.stem, data["def"], data["message"], data["payload"]))
    return found


@dataclass(frozen=True, slots=True)
class Transcript:
    """One turn on the wire: the lines the client read and wrote, each without its newline."""

    received: tuple[bytes, ...]
    sent: tuple[bytes, ...]

    def pending(self) -> dict[Any, str]:
        """The method of each request the client sent, by id: what its answer is read as."""
        requests = (json.loads(line) for line in self.sent)
        return {m["id"]: m["method"] for m in requests if "method" in m and "id" in m}


def load_turn() -> Transcript:
    """The realistic turn (``bench.turn_writer``)."""

    def read(name: str) -> tuple[bytes, ...]:
        return tuple((TURN / name).read_bytes().splitlines())

    return Transcript(read("agent-to-client.ndjson"), read("client-to-agent.ndjson"))
