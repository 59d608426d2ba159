"""Benchmark of ``acpgen diff`` over the whole schema history: every consecutive pair.

Prints the time to load and check every revision (JSON parsing, meta-validation, ``$ref``
resolution, items), the time to compare all consecutive pairs, and the finding counts by level
for each pair.

    uv run --frozen python -m bench.diff_history [--acp-schemas DIR] [--counts]

The history is the one the tests read (``tests/data/acp-schemas``, unpacked into a temporary
folder), or the folder that ``--acp-schemas`` / ``ACP_SCHEMAS`` names.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from acpgen.diff.compare import compare
from acpgen.diff.report import counts
from acpgen.diff.snapshot import Snapshot
from acpgen.diff.sources import load_files, locate
from tests.support.schema_history import unpack


def _load_all(root: Path, tags: list[str]) -> tuple[float, dict[str, Snapshot]]:
    started = time.perf_counter()
    snapshots = {tag: load_files(tag, locate(root / tag)) for tag in tags}
    return time.perf_counter() - started, snapshots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--acp-schemas",
        default=os.environ.get("ACP_SCHEMAS") or None,
        metavar="DIR",
        help="a folder of revisions (index.json + a folder per tag); default: tests/data/acp-schemas",
    )
    parser.add_argument("--repeats", type=int, default=3, help="repeats of the warm load and the comparison")
    parser.add_argument("--counts", action="store_true", help="print the finding counts of every pair")
    args = parser.parse_args()
    if args.acp_schemas:
        measure(Path(args.acp_schemas), args.repeats, args.counts)
        return
    with tempfile.TemporaryDirectory(prefix="acp-schemas-") as folder:
        measure(unpack(Path(folder)), args.repeats, args.counts)


def measure(root: Path, repeats: int, show_counts: bool) -> None:
    tags = [entry["tag"] for entry in json.loads((root / "index.json").read_text(encoding="utf-8"))]
    pairs = list(itertools.pairwise(tags))
    loads = [_load_all(root, tags) for _ in range(repeats)]
    loaded = statistics.median(seconds for seconds, _ in loads)
    snapshots = loads[0][1]
    compare_times = []
    results = {}
    for _ in range(repeats):
        started = time.perf_counter()
        results = {(a, b): compare(snapshots[a], snapshots[b]) for a, b in pairs}
        compare_times.append(time.perf_counter() - started)
    compared = statistics.median(compare_times)
    total = sum(len(f) for f in results.values())
    print(f"acpgen diff over {len(tags)} revisions, {len(pairs)} consecutive pairs, {total} findings")
    print(f"  load and check every revision: {loaded:6.2f} s")
    print(f"  compare all pairs:             {compared:6.2f} s  ({compared / len(pairs) * 1000:.0f} ms per pair)")
    print(f"  total:                         {loaded + compared:6.2f} s  (median of {repeats})")
    if show_counts:
        print(f"\n  {'old':>16} -> {'new':<16} breaking warning  info")
        for (a, b), findings in results.items():
            c = counts(findings)
            print(f"  {a:>16} -> {b:<16} {c['breaking']:>8} {c['warning']:>7} {c['info']:>5}")


if __name__ == "__main__":
    main()
