"""Random mutations of the pinned schema never end in a traceback (issue 13, item 3).

Each case is one mutation (:mod:`tests.support.schema_mutations`, 12 kinds) of the pinned stable schema,
drawn from a ``random.Random`` seeded with :data:`SEED` and the case's index, so that every case
is reproducible on its own (``mutant(index)``). The property, for ``generate`` and ``diff`` (the
pinned schema against the mutant):

- the command succeeds, or it fails with an input error (exit 2): one or more problems, each with
  what is wrong, where (the file and a JSON pointer, or a pointer into ``$defs``) and what to do;
  nothing else is ever raised (no traceback);
- the two commands read a mutant the same way: when ``generate`` refuses it while loading or
  building the IR, ``diff`` refuses it with the same problem.

:data:`CASES` cases run in process through what ``generate`` does before datamodel-code-generator
and ruff (load, meta-validation, the IR, the models' input); every :data:`DIFF_EVERY`-th of them
also through the whole of ``diff``. A seeded sample of :data:`CLI_PASSING` cases that pass and
:data:`CLI_FAILING` that fail also runs through the real command line in a subprocess: ``generate``
into an output folder holding a copy of ``generated/acp_bindings`` must exit 0 with a package whose
every module imports, or exit 2 with ``acpgen: error:`` lines and no traceback and the folder
byte-identical; ``diff`` must exit as it does in process (0, or 2 with the same problem).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from acpgen.diff.compare import compare
from acpgen.diff.snapshot import Snapshot
from acpgen.diff.sources import load_side
from acpgen.errors import AcpgenError, Problem
from acpgen.pipeline import Revision, read_schema_file
from acpgen.render.model_keys import keyed_by_class
from acpgen.render.prepare import prepare
from acpgen.source.fetch import DEFAULT_PACKAGE
from tests.support.instances import RandomChoices
from tests.support.schema_mutations import KINDS, Mutant, mutate
from tests.unit.test_errors import ROOT, snapshot
from tests.unit.test_errors import Snapshot as Tree

pytestmark = pytest.mark.slow

SEED = 13
CASES = int(os.environ.get("ACPGEN_MUTANTS", "512"))
"""512 in ``make test`` (about 55 CPU-seconds on a quiet core); ``ACPGEN_MUTANTS=N`` runs N (a
multiple of :data:`CHUNKS`, at least 512): the cases of a smaller run are the first cases of a
larger one. 2,048 ran in every ``make test`` until the suite outgrew its ten minutes, and pass
(``ACPGEN_MUTANTS=2048 uv run --frozen pytest -q -n 2 tests/unit/test_schema_mutations.py``)."""
DIFF_EVERY = 4
"""One case in four is also given to ``diff``, which builds two IRs of the mutant (``generate``
one); all of them would take the suite about a minute longer (they pass: run ``diff_in_process`` on
each to see)."""
CHUNKS = 4
"""The in-process cases run as this many tests, which pytest-xdist spreads over its workers."""
CLI_PASSING = 4
CLI_FAILING = 4
PINNED_DIR = ROOT / "schema"
PINNED_FILE = PINNED_DIR / "v1" / "schema.json"
GENERATED_PACKAGE = ROOT / "generated" / "acp_bindings"


@cache
def pinned_doc() -> object:
    return json.loads(PINNED_FILE.read_text(encoding="utf-8"))


def mutant(index: int) -> Mutant:
    """Case ``index``: the same mutant on every run, whatever other cases ran before."""
    return mutate(pinned_doc(), RandomChoices(random.Random(f"acpgen-schema-mutations-{SEED}-{index}")))


@cache
def pinned_side() -> Snapshot:
    return load_side(str(PINNED_DIR), ROOT / ".acpgen-cache", package=DEFAULT_PACKAGE)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one command made of a mutant: None when it succeeded, else the problems it reported."""

    problems: tuple[Problem, ...] | None
    stage: str = ""
    """Where it stopped: ``ir`` (loading or building the IR) or ``models`` (preparing the models' input)."""


class Crash(Exception):
    """Something other than an input error came out of a command."""


def generate_in_process(schema: Path) -> Outcome:
    """What ``acpgen generate --schema FILE --stable`` does before rendering models."""
    stage = "ir"
    try:
        revision = Revision(
            stable=read_schema_file(schema, package="local", version="local"), unstable=None, protocol_version=1
        )
        protocol = revision.protocol("stable")
        stage = "models"
        keyed_by_class(prepare(protocol), protocol)
    except AcpgenError as error:
        return Outcome(error.problems, stage)
    except Exception as error:
        raise Crash(f"generate ({stage}): {traceback.format_exc()}") from error
    return Outcome(None)


def diff_in_process(schema: Path) -> Outcome:
    """``acpgen diff schema/ FILE``: both sides loaded as the command loads them, then compared."""
    try:
        compare(pinned_side(), load_side(str(schema), schema.parent, package=DEFAULT_PACKAGE))
    except AcpgenError as error:
        return Outcome(error.problems, "ir")
    except Exception as error:
        raise Crash(f"diff: {traceback.format_exc()}") from error
    return Outcome(None)


def check_problems(problems: tuple[Problem, ...], schema: Path) -> list[str]:
    """What is missing from the problems of an input error (an empty list when each is complete)."""
    if not problems:
        return ["an input error with no problem in it"]
    faults = []
    for p in problems:
        if not p.what.strip() or not p.hint.strip():
            faults.append(f"a problem without what or hint: {p}")
        if not p.where.startswith((f"{schema}#", f"{schema} (", f"{schema.name}#", f"{schema.name} (", "/")):
            faults.append(f"a problem that does not point into the schema: {p}")
        if "Traceback" in p.message():
            faults.append(f"a traceback in a message: {p}")
    return faults


def run_case(index: int, folder: Path) -> tuple[Mutant, Outcome, Outcome | None]:
    """Write mutant ``index`` into ``folder`` and give it to ``generate`` (and, for every
    :data:`DIFF_EVERY`-th case, to ``diff``); raise on a broken property."""
    m = mutant(index)
    schema = folder / "schema.json"
    schema.write_text(m.text(), encoding="utf-8")
    try:
        generated = generate_in_process(schema)
        diffed = diff_in_process(schema) if (index // CHUNKS) % DIFF_EVERY == 0 else None
    except Crash as crash:
        raise Crash(_describe(index, m, [str(crash)])) from crash
    faults = check_problems(generated.problems, schema) if generated.problems is not None else []
    if diffed is not None and diffed.problems is not None:
        faults += check_problems(diffed.problems, schema)
    if diffed is not None and generated.problems is not None and generated.stage == "ir":
        if diffed.problems is None:
            faults.append(f"generate refused the mutant but diff read it: {generated.problems[0]}")
        elif diffed.problems[0].what != generated.problems[0].what:
            faults.append(f"generate and diff disagree: {generated.problems[0]} vs {diffed.problems[0]}")
    if faults:
        raise AssertionError(_describe(index, m, faults))
    return m, generated, diffed


def _describe(index: int, m: Mutant, faults: list[str]) -> str:
    where = "/".join(map(str, m.path))
    return (
        f"case {index} (seed {SEED}; mutant({index}) in tests/unit/test_schema_mutations.py): {m.kind} at /{where} "
        f"{m.detail}\n" + "\n".join(faults)
    )


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_mutants_give_a_result_or_a_clear_error(chunk: int, tmp_path: Path) -> None:
    """The property on every :data:`CHUNKS`-th case; and, as a control, the chunk's cases are
    distinct, of every kind, and both generate and are refused (many times each)."""
    indices = range(chunk, CASES, CHUNKS)
    failures: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    kinds: set[str] = set()
    outcomes = {True: 0, False: 0}
    for index in indices:
        try:
            m, generated, _ = run_case(index, tmp_path)
        except (AssertionError, Crash) as failure:
            failures.append(str(failure))
            continue
        seen.add((m.kind, repr(m.path), m.detail))
        kinds.add(m.kind)
        outcomes[generated.problems is None] += 1
    assert len(indices) == CASES // CHUNKS and CASES >= 512 and CASES % CHUNKS == 0
    assert not failures, f"{len(failures)} of {len(indices)} mutants broke the property:\n\n" + "\n\n".join(
        failures[:5]
    )
    assert len(seen) >= 0.9 * len(indices), "the cases repeat themselves"
    assert kinds == set(KINDS)
    assert min(outcomes.values()) >= len(indices) // 5, outcomes  # a fifth of the cases at least, each way


# --- through the command line ----------------------------------------------------------------------


def cli_sample(tmp_path: Path) -> list[tuple[int, Outcome]]:
    """A seeded sample of cases: the first that generate in process and the first that do not."""
    order = random.Random(f"acpgen-schema-mutations-cli-{SEED}").sample(range(CASES), 200)
    passing: list[tuple[int, Outcome]] = []
    failing: list[tuple[int, Outcome]] = []
    for index in order:
        _, generated, _ = run_case(index, tmp_path)
        group = passing if generated.problems is None else failing
        if len(group) < (CLI_PASSING if group is passing else CLI_FAILING):
            group.append((index, generated))
        if len(passing) == CLI_PASSING and len(failing) == CLI_FAILING:
            break
    assert (len(passing), len(failing)) == (CLI_PASSING, CLI_FAILING)
    return passing + failing


IMPORT_CHECK = """
import importlib, pkgutil, sys
import acp_bindings
names = [m.name for m in pkgutil.iter_modules(acp_bindings.__path__)]
for name in names:
    importlib.import_module("acp_bindings." + name)
from acp_bindings import dispatch, methods
assert methods.METHODS and len(names) > 10, names
print(len(names))
"""


def acpgen(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    command = [sys.executable, "-m", "acpgen", *argv]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300)


def test_a_sample_through_the_command_line(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.acpgen]\n", encoding="utf-8")
    (tmp_path / "probe").mkdir()
    cases = cli_sample(tmp_path / "probe")
    failures = []
    for index, expected in cases:
        folder = tmp_path / f"case{index}"
        folder.mkdir()
        schema = folder / "schema.json"
        schema.write_text(mutant(index).text(), encoding="utf-8")
        out = folder / "out"
        shutil.copytree(GENERATED_PACKAGE, out / "acp_bindings")
        before = snapshot(out)
        result = acpgen(
            "--config", str(pyproject), "generate", "--schema", str(schema), "--out", str(out), "--stable", cwd=folder
        )
        fault = _cli_fault(result, expected, out, before) or _cli_diff_fault(schema, folder)
        if fault:
            failures.append(_describe(index, mutant(index), [fault]))
    assert not failures, "\n\n".join(failures)


def _cli_diff_fault(schema: Path, folder: Path) -> str | None:
    expected = diff_in_process(schema)
    result = acpgen("diff", str(PINNED_DIR), str(schema), "--format", "json", cwd=folder)
    if "Traceback" in result.stderr:
        return f"diff: a traceback:\n{result.stderr[-3000:]}"
    if expected.problems is None:
        return None if result.returncode == 0 else f"diff: exit {result.returncode}:\n{result.stderr[-3000:]}"
    errors = [line for line in result.stderr.splitlines() if line.startswith("acpgen: error: ")]
    if result.returncode != 2 or not any(expected.problems[0].what in line for line in errors):
        return f"diff: exit {result.returncode}, not the error {expected.problems[0]}:\n{result.stderr[-3000:]}"
    return None


def _cli_fault(result: subprocess.CompletedProcess[str], expected: Outcome, out: Path, before: Tree) -> str | None:
    if "Traceback" in result.stderr:
        return f"a traceback:\n{result.stderr[-3000:]}"
    if expected.problems is not None:  # refused before rendering: exit 2, the output as it was
        errors = [line for line in result.stderr.splitlines() if line.startswith("acpgen: error: ")]
        if result.returncode != 2 or not errors:
            return f"exit {result.returncode} without `acpgen: error:` lines:\n{result.stderr[-3000:]}"
        if not any(expected.problems[0].what in line for line in errors):
            return f"the command line reports another problem than {expected.problems[0]}:\n{result.stderr}"
        if snapshot(out) != before:
            return "the output folder changed after a failure"
        return None
    if result.returncode == 2:  # refused while rendering (models the IR names are missing): a clear error
        errors = [line for line in result.stderr.splitlines() if line.startswith("acpgen: error: ")]
        if not errors or snapshot(out) != before:
            return f"exit 2 without a message, or the output changed:\n{result.stderr[-3000:]}"
        return None
    if result.returncode != 0:
        return f"exit {result.returncode}:\n{result.stderr[-3000:]}"
    imported = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK], cwd=out, capture_output=True, text=True, check=False, timeout=300
    )
    if imported.returncode != 0:
        return f"the generated package does not import:\n{imported.stderr[-3000:]}"
    return None
