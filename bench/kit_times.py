"""How long ``acpgen conformance agent`` takes on a broken agent: one whole run (every scenario,
default ``--timeout`` and ``--jobs``) per deliberate defect of the kit's test agent
(tests/support/peers/conformance_agent.py), the defect's kit options as its test gives them.
Not part of ``make bench`` (it takes minutes): the figures in docs/conformance.md come from

    python -m bench.kit_times [--parallel N]

It prints each defect's wall time, the status of the requirement it breaks in that whole run, and
the verdict line, slowest first, then the median and the maximum.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conformance.test_agent_kit import DEFECTS
from tests.support.kit import LONG_PROMPT, PEER, kit, report, status


def one(entry: tuple[str, str, str, tuple[str, ...]]) -> tuple[str, float, str]:
    defect, _, requirement, options = entry
    cancel = () if "--cancel-prompt" in options else ("--cancel-prompt", LONG_PROMPT)
    with tempfile.TemporaryDirectory(prefix="acpgen-kit-times-") as folder:
        path = Path(folder) / "report.json"
        start = time.monotonic()
        done = kit(
            "agent", *options, *cancel, "--report-json", str(path),
            "--", sys.executable, str(PEER), "--defect", defect,
        )  # fmt: skip
        took = time.monotonic() - start
        got = status(report(path)).get(requirement, "absent") if path.is_file() else "no report"
    lines = done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or ["(no output)"]
    return defect, took, f"{requirement} {got}; {lines[-1][:90]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.kit_times")
    parser.add_argument("--parallel", type=int, default=1, help="runs at once (1)")
    args = parser.parse_args(argv)
    kit("agent", "--help")  # builds the kit once, outside the timings
    with ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(one, DEFECTS))
    for defect, took, verdict in sorted(results, key=lambda r: -r[1]):
        print(f"{took:6.1f} s  {defect:32}  {verdict}")
    times = [took for _, took, _ in results]
    print(
        f"{len(times)} runs, parallel {args.parallel}: median {statistics.median(times):.1f} s, max {max(times):.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
