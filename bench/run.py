"""``make bench``: our figures against their references, measured alternately in one run.

    uv run --group bench python -m bench.run [--quick] [--json] [--only T1,P3] [--out FILE]

Prints, for each figure, our median, the reference's, the ratio and the target (met or
missed), and writes the same figures as JSON to ``--out`` (``bench/results.json`` by default,
not committed). The references: the official Python SDK (``agent-client-protocol``, the
``bench`` dependency group) for T1-T4, P1, P2 and R1, datamodel-code-generator alone for P3,
bare params validation for P4. What users feel comes first: T1 reading a realistic turn
(``bench.read_path``), T2 sending it (``bench.send_path``), T3 round trips over a pipe
(``bench.round_trip``), T4 memory after import (``bench.rss``), T5 and T6 round trips over
WebSocket and Streamable HTTP against the TypeScript SDK's server (``bench.remote_trip``), T7 round trips
through the relay against a direct stdio connection to the same agent (``bench.relay_trip``), T8
T3's round trips with OpenTelemetry set up against the same without it (``bench.otel_cost``), R3
a remote server's memory per idle connection (``bench.idle_remote``). No figure is asserted
anywhere: the benchmark reports, the reader judges.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.cold_start import p2
from bench.figures import Figure, p1, p3, p4, r1, r2
from bench.idle_remote import r3
from bench.otel_cost import t8
from bench.read_path import t1
from bench.relay_trip import t7
from bench.remote_trip import t5_t6
from bench.round_trip import t3
from bench.rss import t4
from bench.send_path import t2

FIGURES = {
    "T1": t1,
    "T2": t2,
    "T3": t3,
    "T4": t4,
    "T5": t5_t6,
    "T7": t7,
    "T8": t8,
    "P1": p1,
    "P2": p2,
    "P3": p3,
    "P4": p4,
    "R1": r1,
    "R2": r2,
    "R3": r3,
}
ROUNDS = {
    "T1": 15,
    "T2": 15,
    "T3": 9,
    "T4": 5,
    "T5": 7,
    "T7": 7,
    "T8": 7,
    "P1": 9,
    "P2": 15,
    "P3": 5,
    "P4": 9,
    "R1": 3,
    "R2": 5,
    "R3": 3,
}
RESULTS = Path(__file__).resolve().parent / "results.json"


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench", description="acpgen benchmarks (see bench/run.py)")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run, noisier figures)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--only", default=",".join(FIGURES), help="comma-separated figures to run (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"JSON file of the figures (default: {RESULTS.name})")
    args = parser.parse_args()
    chosen = [name.strip().upper() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in FIGURES]
    if unknown:
        parser.error(f"unknown figure(s) {', '.join(unknown)}; choose among {', '.join(FIGURES)}")
    load_before = os.getloadavg()
    figures: list[Figure] = []
    for name in chosen:
        rounds = 3 if args.quick else ROUNDS[name]
        figures += FIGURES[name](rounds)
    report = _report(figures, sys.argv[1:], load_before)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["figures"], indent=2) if args.json else _table(figures))
    return 0


def _report(figures: list[Figure], argv: list[str], load_before: tuple[float, float, float]) -> dict[str, Any]:
    """The figures as JSON, with what they were measured on."""
    return {
        "command": " ".join(["python -m bench.run", *argv]),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "figures": [{**asdict(f), "ratio": f.ratio, "result": _result(f)} for f in figures],
    }


def _result(figure: Figure) -> str:
    if figure.target == "-":
        return ""
    floor = f" (floor {figure.floor:.2f}x)" if figure.floor is not None else ""
    return ("met" if figure.met else "MISSED") + floor


def _table(figures: list[Figure]) -> str:
    head = f"{'figure':<76} {'ours':>12} {'reference':>12} {'ratio':>7}  {'target':<9} result"
    lines = [
        f"acpgen benchmarks, Python {platform.python_version()} on {platform.machine()}; medians of alternating rounds",
        head,
        "-" * len(head),
    ]
    for f in figures:
        lines.append(
            f"{f.name:<76} {_num(f.ours):>12} {_num(f.theirs):>12} {f.ratio:>6.2f}x  {f.target:<9} {_result(f)}"
            + (f"  ({f.unit}; {f.note})" if f.note else f"  ({f.unit})")
        )
    return "\n".join(lines)


def _num(value: float) -> str:
    return f"{value:,.0f}" if value >= 1000 else f"{value:.3f}"


if __name__ == "__main__":
    sys.exit(main())
