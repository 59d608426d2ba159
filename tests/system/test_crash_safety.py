"""Crash safety (issue 13): a write killed with SIGKILL at any moment leaves its output wholly old or
wholly new once the next run has started, each entry is whole even before, and no staging folder
survives the next run.

Kills are real: a subprocess is sent SIGKILL by tests/killpoints/sitecustomize.py at a numbered
step of :mod:`acpgen.output.atomic_write` (every step, one after the other), or by this test after a
random delay. The fast test kills tests/support/peers/writer.py writing prepared files at every step of
three output shapes (two packages as ``acpgen generate --both`` writes them, a first vendoring,
schema files and their lock as ``acpgen schema fetch`` writes them), with and without
``renameat2(RENAME_EXCHANGE)``, and sometimes kills the recovery too; the slow test kills a real
``acpgen generate --both``.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acpgen.output import atomic_write
from tests.support.crash import ROOT, Tree, hook_env, materialize, pending, run, snapshot, stagings, view

pytestmark = pytest.mark.slow

FIXTURE = ROOT / "tests" / "fixtures" / "unions" / "schema.json"
ACPGEN = Path(sys.executable).parent / "acpgen"
SEED = 13
KILLED = -signal.SIGKILL


@dataclass(frozen=True)
class Scenario:
    """One write: the entries before and after (text of a file, {path: text} of a folder, None: absent)."""

    name: str
    old: dict[str, Any]
    new: dict[str, Any]
    unmanaged: dict[str, str] = field(default_factory=dict)
    """Files in the same folder that the write must leave alone."""

    @property
    def names(self) -> list[str]:
        return sorted(self.old.keys() | self.new.keys())

    def tree(self, entries: dict[str, Any]) -> Tree:
        files = dict(self.unmanaged)
        for name, value in entries.items():
            if isinstance(value, str):
                files[name] = value
            elif isinstance(value, dict):
                files.update({f"{name}/{path}": text for path, text in value.items()})
        tree: Tree = {path: text.encode() for path, text in files.items()}
        for name, value in entries.items():
            if isinstance(value, dict):
                tree[name] = None
        for path in list(tree):
            for folder in Path(path).parents[:-1]:
                tree[folder.as_posix()] = None
        return tree


SCENARIOS = [
    Scenario(
        "two-packages",
        old={
            "pkg_a": {"__init__.py": "a = 1\n", "models.py": "m = 1\n", "sub/x.py": "x = 1\n"},
            "pkg_b": {"__init__.py": "b = 1\n", "gone.py": "g = 1\n"},
            "kind": "a file that becomes a folder\n",
        },
        new={
            "pkg_a": {"__init__.py": "a = 2\n", "models.py": "m = 2\n", "sub/x.py": "x = 2\n", "sub/y.py": "y = 2\n"},
            "pkg_b": {"__init__.py": "b = 2\n", "new.py": "n = 2\n"},
            "kind": {"now.py": "a folder\n"},
        },
        unmanaged={"README.md": "not ours\n"},
    ),
    Scenario("first-vendoring", old={}, new={"_acp": {"__init__.py": "", "models.py": "m\n", "_vendor.json": "{}\n"}}),
    Scenario(
        "schema-files",
        old={"v1/schema.json": "{1}", "v1/schema.unstable.json": "{u1}", "v9/old.json": "[]", "schema.lock.json": "l1"},
        new={
            "v1/schema.json": "{2}",
            "v1/schema.unstable.json": "{u2}",
            "v9/old.json": None,
            "schema.lock.json": "l2",
            "v2/extra.json": "{e}",
        },
        unmanaged={"capability-rules.json": "{}", "v1/notes.txt": "mine\n"},
    ),
]


def check_whole(out: Path, names: list[str], old: Tree, new: Tree, settled: Tree, exchange: bool) -> None:
    """After a kill: the output is ``settled`` unless a committed write is pending, and each entry is whole."""
    tree = snapshot(out)
    if not pending(out):
        assert tree == settled, "with no committed write pending, the output must be wholly old or wholly new"
        return
    assert settled is new, "a journal exists only once the write committed"
    for name in names:
        allowed = [view(old, name), view(new, name)] + ([] if exchange else [{}])
        assert view(tree, name) in allowed, f"{name} is neither wholly old nor wholly new"
    for path, data in old.items():
        if not any(path == n or path.startswith(n + "/") or n.startswith(path + "/") for n in names):
            assert tree.get(path, "absent") == data, f"{path}, which the write does not own, changed"


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_a_write_killed_at_every_step_leaves_old_or_new(
    scenario: Scenario, exchange: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not exchange:
        monkeypatch.setattr(atomic_write, "exchange", lambda first, second: False)
    rng = random.Random(f"{SEED}/{scenario.name}/{exchange}")
    old, new = scenario.tree(scenario.old), scenario.tree(scenario.new)
    payload, out, log = tmp_path / "new.json", tmp_path / "out", tmp_path / "steps.log"
    payload.write_text(json.dumps({"entries": scenario.new}), encoding="utf-8")
    write = [sys.executable, "-m", "tests.support.peers.writer", str(payload), str(out)]
    recover = [sys.executable, "-m", "tests.support.peers.writer", "--recover", str(out)]

    materialize(out, old)
    assert run(write, hook_env(log=log, exchange=exchange)).returncode == 0
    steps = log.read_text(encoding="utf-8").splitlines()
    assert snapshot(out) == new and not stagings(out)
    assert "committed" in steps and len(steps) >= 10
    assert any(s.startswith("moved aside") for s in steps) == (not exchange and scenario.old != {})

    kills = 0
    for step in range(1, len(steps) + 1):
        materialize(out, old)
        log.unlink()
        done = run(write, hook_env(kill_at=str(step), log=log, exchange=exchange))
        assert done.returncode == KILLED, done.stderr
        kills += 1
        settled = new if "committed" in log.read_text(encoding="utf-8").splitlines() else old
        check_whole(out, scenario.names, old, new, settled, exchange)
        if pending(out) and rng.random() < 0.5:
            killed = run(recover, hook_env(kill_at=str(rng.randint(1, 8)), exchange=exchange))
            kills += killed.returncode == KILLED
            check_whole(out, scenario.names, old, new, settled, exchange)
        atomic_write.recover(out)  # what the next run does first
        assert snapshot(out) == settled, f"killed at step {step} ({steps[step - 1]}), the next run did not settle"
        assert not stagings(out), "a staging folder survived the next run"
    assert kills >= len(steps)


# --- a real `acpgen generate --both`, killed ---------------------------------------------------


def generate_argv(project: Path, *extra: str) -> list[str]:
    """`acpgen generate --both` of the project's schema.json into its out/ folder."""
    argv = [str(ACPGEN), "--config", str(project / "pyproject.toml"), "generate", "--both", *extra]
    return [*argv, "--schema", str(project / "schema.json"), "--out", str(project / "out")]


def generate(project: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return run(generate_argv(project, *extra), env, cwd=project)


def test_killed_acpgen_generate_leaves_old_or_new(tmp_path: Path) -> None:
    """Kill `acpgen generate --both` between its two package swaps, at a random step (which starts
    by finishing the previous kill's write) and after a random delay; then the next run is clean."""
    rng = random.Random(SEED)
    assert ACPGEN.is_file(), f"the acpgen console script is missing at {ACPGEN}"
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\ncache-dir = "cache"\n', encoding="utf-8")
    schema, out, log = tmp_path / "schema.json", tmp_path / "out", tmp_path / "steps.log"
    shutil.copy(FIXTURE, schema)
    assert generate(tmp_path, hook_env()).returncode == 0
    old = snapshot(out)
    schema.write_text(schema.read_text(encoding="utf-8").replace('"A circle."', '"A round shape."'), encoding="utf-8")
    started = time.monotonic()
    assert generate(tmp_path, hook_env(log=log)).returncode == 0
    duration = time.monotonic() - started
    new, steps = snapshot(out), log.read_text(encoding="utf-8").splitlines()
    names = ["acp_bindings", "acp_bindings_unstable"]
    assert old != new and all(view(old, n) != view(new, n) for n in names)
    materialize(out, old)

    killed = generate(tmp_path, hook_env(kill_at="placed acp_bindings"), "--force")
    assert killed.returncode == KILLED, killed.stderr
    assert pending(out), "killed after its commit, the run leaves its journal"
    tree = snapshot(out)
    assert view(tree, names[0]) == view(new, names[0]) and view(tree, names[1]) == view(old, names[1])

    for kill_at in (str(rng.randint(1, len(steps))), None):
        env = hook_env(kill_at=kill_at or "")
        process = subprocess.Popen(generate_argv(tmp_path, "--force"), env=env, cwd=tmp_path, stderr=subprocess.PIPE)
        if kill_at is None:
            time.sleep(rng.uniform(0.05, 0.9) * duration)
            process.send_signal(signal.SIGKILL)
        process.communicate(timeout=120)
        assert process.returncode == KILLED or kill_at is None, "a run with more steps than the last one was not killed"
        check_whole(out, names, old, new, new, exchange=True)

    done = generate(tmp_path, hook_env())
    assert done.returncode == 0, done.stderr
    assert snapshot(out) == new
    assert not stagings(out) and not stagings(tmp_path / "cache"), "a staging folder survived the next run"
