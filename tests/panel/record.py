"""Record what the kit reports for panel peers into ``expected/<peer>.json``:

    uv run --frozen python -m tests.panel.record [PEER ...] [--runs N]

Each peer is run N times (default 3); an outcome that differs between runs is printed and not
recorded (fix the peer's setup until it is stable). Entries of ``kit_wrong`` keep the spec's
status (the kit's status today goes to their ``kit_today``), and so does the verdict when
``kit_wrong`` holds ``verdict``; ``judgements`` are kept. Every FAIL and NOT_TESTED left without a
judgement is listed: judge each against the spec before committing the file.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tests.panel.peers import PEERS
from tests.panel.runs import EXPECTED, VERDICT, run_peer, statuses


def record(name: str, runs: int) -> int:
    reports = [run_peer(PEERS[name]) for _ in range(runs)]
    seen = [statuses(r["report"]) for r in reports]
    verdicts = {r["report"]["verdict"]["conformant"] for r in reports}
    print(f"{name}: {', '.join(str(r['seconds']) for r in reports)} s; {reports[0]['report']['verdict']['line']}")
    unstable = {rid: sorted({s.get(rid, "-") for s in seen}) for rid in seen[0] if len({s.get(rid) for s in seen}) > 1}
    if unstable or len(verdicts) > 1:
        print(f"  unstable between runs, nothing recorded: {unstable}, verdicts {verdicts}")
        return 1
    path = EXPECTED / f"{name}.json"
    old: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    wrong: dict[str, Any] = old.get("kit_wrong", {})
    today = seen[0]
    requirements = {rid: wrong[rid]["spec"] if rid in wrong else status for rid, status in sorted(today.items())}
    for rid, entry in wrong.items():
        entry["kit_today"] = reports[0]["report"]["verdict"]["conformant"] if rid == VERDICT else today.get(rid)
    conformant = wrong[VERDICT]["spec"] if VERDICT in wrong else reports[0]["report"]["verdict"]["conformant"]
    judgements: dict[str, str] = old.get("judgements", {})
    data = {
        "peer": name,
        "what": PEERS[name].what,
        "mode": PEERS[name].mode,
        "conformant": conformant,
        "requirements": requirements,
        "kit_wrong": wrong,
        "judgements": judgements,
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    unjudged = [rid for rid, s in requirements.items() if s in ("FAIL", "NOT_TESTED") and rid not in judgements]
    unjudged += [rid for rid in wrong if rid not in judgements]
    if unjudged:
        print(f"  to judge (FAIL, NOT_TESTED, kit_wrong without a judgement): {unjudged}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.panel.record", description=__doc__)
    parser.add_argument("peers", nargs="*", help=f"default: all of {', '.join(sorted(PEERS))}")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args(argv)
    unknown = set(options.peers) - set(PEERS)
    if unknown:
        parser.error(f"no such peer: {', '.join(sorted(unknown))}")
    return max(record(name, options.runs) for name in options.peers or sorted(PEERS))


if __name__ == "__main__":
    sys.exit(main())
