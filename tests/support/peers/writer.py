"""Write prepared entries with acpgen's atomic writer: the process the crash tests kill.

``python -m tests.support.peers.writer PAYLOAD OUT`` writes the entries of the JSON file PAYLOAD
(``{"entries": {name: text of a file | {path: text} for a folder | null to remove}}``) into the
folder OUT; ``python -m tests.support.peers.writer --recover OUT`` only recovers what killed runs left
there. Kills come from tests/killpoints/sitecustomize.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from acpgen.output import atomic_write


def entries(payload: dict[str, object]) -> dict[str, atomic_write.Content]:
    """The writer's entries for a payload of texts."""
    found: dict[str, atomic_write.Content] = {}
    for name, value in payload.items():
        if value is None:
            found[name] = None
        elif isinstance(value, str):
            found[name] = value.encode("utf-8")
        else:
            assert isinstance(value, dict)
            found[name] = atomic_write.Folder({path: text.encode("utf-8") for path, text in value.items()})
    return found


def main(argv: list[str]) -> int:
    if argv[0] == "--recover":
        atomic_write.recover(Path(argv[1]))
        return 0
    payload = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    atomic_write.write(Path(argv[1]), entries(payload["entries"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
