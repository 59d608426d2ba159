"""``make bench``: our figures against their references, measured alternately in one run.

    uv run --group bench python -m bench.run [--quick] [--json] [--only P1,P3]

Prints, for each figure, our median, the reference's, the ratio and the target (met or
missed). The references: the official Python SDK (``agent-client-protocol``, the ``bench``
dependency group) for P1, P2 and R1, datamodel-code-generator alone for P3, bare params
validation for P4. No figure is asserted anywhere: the benchmark reports, the reader judges.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from dataclasses import asdict

from bench.figures import Figure, p1, p2, p3, p4, r1, r2

FIGURES = {"P1": p1, "P2": p2, "P3": p3, "P4": p4, "R1": r1, "R2": r2}
ROUNDS = {"P1": 9, "P2": 15, "P3": 5, "P4": 9, "R1": 3, "R2": 5}


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench", description="acpgen benchmarks (see bench/run.py)")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run, noisier figures)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--only", default=",".join(FIGURES), help="comma-separated figures to run (default: all)")
    args = parser.parse_args()
    chosen = [name.strip().upper() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in FIGURES]
    if unknown:
        parser.error(f"unknown figure(s) {', '.join(unknown)}; choose among {', '.join(FIGURES)}")
    figures: list[Figure] = []
    for name in chosen:
        rounds = 3 if args.quick else ROUNDS[name]
        figures += FIGURES[name](rounds)
    if args.json:
        print(json.dumps([{**asdict(f), "ratio": f.ratio} for f in figures], indent=2))
    else:
        print(_table(figures))
    return 0


def _table(figures: list[Figure]) -> str:
    head = f"{'figure':<62} {'ours':>12} {'reference':>12} {'ratio':>7}  {'target':<9} result"
    lines = [
        f"acpgen benchmarks, Python {platform.python_version()} on {platform.machine()}; medians of alternating rounds",
        head,
        "-" * len(head),
    ]
    for f in figures:
        result = "met" if f.met else "MISSED"
        if f.target == "-":
            result = ""
        lines.append(
            f"{f.name:<62} {_num(f.ours):>12} {_num(f.theirs):>12} {f.ratio:>6.2f}x  {f.target:<9} {result}"
            + (f"  ({f.unit}; {f.note})" if f.note else f"  ({f.unit})")
        )
    return "\n".join(lines)


def _num(value: float) -> str:
    return f"{value:,.0f}" if value >= 1000 else f"{value:.3f}"


if __name__ == "__main__":
    sys.exit(main())
