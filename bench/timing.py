"""Alternating measurement: every contender runs once per round, in turn, after a warm-up
round; the figure is the median over rounds (so drift of the machine hits all alike)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping

Work = Callable[[], object]


def seconds(work: Work, repeat: int = 1) -> float:
    """Wall time of ``repeat`` calls of ``work``."""
    started = time.perf_counter()
    for _ in range(repeat):
        work()
    return time.perf_counter() - started


def alternate(contenders: Mapping[str, Work], rounds: int, repeat: int = 1) -> dict[str, float]:
    """Median seconds per round (``repeat`` calls) of each contender, measured alternately."""
    for work in contenders.values():  # warm-up: imports, caches, schema builds
        seconds(work, repeat)
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, work in contenders.items():
            samples[name].append(seconds(work, repeat))
    return {name: statistics.median(values) for name, values in samples.items()}
