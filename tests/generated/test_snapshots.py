"""Golden outputs of the small hand-written schemas in tests/fixtures/.

Each fixture folder holds ``schema.json`` and, for a stable/unstable pair, ``schema.unstable.json``.
Both builds of each are rendered and compared file by file with ``tests/golden/<fixture>/``, but for
the runtime's verbatim copies, which are checked against acpgen's runtime instead
(``tests.support.goldens.schema_decided``). A failure prints the unified diff and the one command that
updates every golden file. The fixtures' behaviour is tested on their rendering, imported.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from acpgen.load.rule_table import RULES_FILE, load_rules
from acpgen.pipeline import VARIANTS, Revision, read_schema_file
from tests.support.bindings import field_doc
from tests.support.goldens import check_goldens, render_build, schema_decided

UPDATE_GOLDENS = "make goldens (or: uv run --frozen pytest tests/generated/test_snapshots.py --update-goldens)"

FIXTURES = Path(__file__).parents[1] / "fixtures"
GOLDEN = Path(__file__).parents[1] / "golden"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if (p / "schema.json").is_file())


def package_name(fixture: str, variant: str) -> str:
    return f"{fixture.replace('-', '_')}_{variant}"


def revision(fixture: str) -> Revision:
    folder = FIXTURES / fixture
    unstable = folder / "schema.unstable.json"

    def load(path: Path) -> Any:
        return read_schema_file(path, package="fixture", version="0", name=f"{fixture}/{path.name}")

    rules = folder / RULES_FILE
    return Revision(
        stable=load(folder / "schema.json"),
        unstable=load(unstable) if unstable.exists() else None,
        protocol_version=1,
        rules=load_rules(rules) if rules.exists() else None,
        rules_origin=f"{fixture}/{RULES_FILE}",
        strict_capabilities=True,
    )


def rendered(fixture: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for variant in VARIANTS:
        files.update(render_build(revision(fixture), variant, package_name(fixture, variant)))
    return files


@pytest.mark.parametrize("fixture", NAMES)
def test_golden(fixture: str, update_goldens: bool) -> None:
    update = update_goldens
    files = schema_decided(rendered(fixture))
    check_goldens(files, GOLDEN / fixture, update=update, label=fixture, update_with=UPDATE_GOLDENS)


@pytest.fixture(scope="module")
def golden_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every fixture's packages, rendered (what test_golden compares with the goldens, runtime
    included) into a folder on the import path."""
    folder = tmp_path_factory.mktemp("fixtures")
    for name in NAMES:
        for rel, text in rendered(name).items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(folder))
    yield
    sys.path.remove(str(folder))


def golden_models(fixture: str, variant: str) -> ModuleType:
    return importlib.import_module(f"{package_name(fixture, variant)}.models")


def test_fixture_unions_behave(golden_path: None) -> None:
    m = golden_models("unions", "stable")
    shapes = TypeAdapter(m.Shape)
    assert type(shapes.validate_python({"kind": "circle", "radius": 1.5})).__name__ == "CircleShape"
    with pytest.raises(ValidationError):
        shapes.validate_python({"kind": "hexagon"})
    transports = TypeAdapter(m.Transport)
    assert type(transports.validate_python({"command": "ls"})).__name__ == "Stdio"
    assert type(transports.validate_python({"type": "http", "url": "https://x.test"})).__name__ == "HttpTransport"
    events = TypeAdapter(m.Event)
    other = events.validate_python({"event": "stopped", "code": 3})
    assert events.dump_python(other, by_alias=True, exclude_unset=True) == {"event": "stopped", "code": 3}
    with pytest.raises(ValidationError):
        events.validate_python({"event": "started"})  # known tag, malformed: never the catch-all
    assert TypeAdapter(m.Color).validate_python("mauve") == "mauve"
    with pytest.raises(ValidationError):
        TypeAdapter(m.Level).validate_python("medium")


def test_fixture_unions_of_scalars_behave(golden_path: None) -> None:
    m = golden_models("unions", "stable")
    ids = TypeAdapter(m.Id)  # null | integer | string, untitled: the integer branch is keyed by its type
    assert [ids.validate_json(text) for text in ("7", "7.0", '"7"', "null")] == [7, 7, "7", None]
    for bad in ("true", "7.5", f"{2**63}"):
        with pytest.raises(ValidationError):
            ids.validate_json(bad)
    codes = TypeAdapter(m.Code)  # an open enum; its untitled catch-all is "other"
    assert [codes.validate_json(text) for text in ("-1", "-2.0", "42")] == [-1, -2, 42]
    with pytest.raises(ValidationError):
        codes.validate_json('"-1"')
    amounts = TypeAdapter(m.Amount)  # a titled bounded integer: its alias is named from the title
    assert amounts.validate_json("3") == 3 and m.CountAmount.__value__ is not None
    with pytest.raises(ValidationError):
        amounts.validate_json("70000")


def test_fixture_fields_behave(golden_path: None) -> None:
    record = golden_models("fields", "stable").Record
    base = {"requiredNullable": None, "items": [], "servers": []}
    assert record.model_validate(base).required_nullable is None
    with pytest.raises(ValidationError):
        record.model_validate({"items": [], "servers": []})  # required nullable must be present
    for null_refused in ("optionalPlain", "flag"):
        with pytest.raises(ValidationError):
            record.model_validate({**base, null_refused: None})
    assert record.model_validate({**base, "optionalNullable": None}).optional_nullable is None
    assert record.model_validate(base).caps.fs is True
    for field, bad in (("small", 2**16), ("count", -1), ("count", 2**64), ("offset", -(2**63) - 1)):
        with pytest.raises(ValidationError):
            record.model_validate({**base, field: bad})
    lenient = record.model_validate({**base, "lenientMeta": 7, "items": [{"name": "a"}, {"nom": 1}], "servers": None})
    assert lenient.lenient_meta is None and [i.name for i in lenient.items] == ["a"] and lenient.servers == []
    assert record.model_validate({**base, "items": "nope"}).items == []
    assert record.model_validate({**base, "class": "x"}).class_ == "x"


def test_fixture_stability_pair(golden_path: None) -> None:
    stable, unstable = golden_models("stability", "stable"), golden_models("stability", "unstable")
    assert "additional_directories" not in stable.NewSessionRequest.model_fields
    field = unstable.NewSessionRequest.model_fields["additional_directories"]
    assert field.alias == "additionalDirectories"
    assert "UNSTABLE" in field_doc(unstable.NewSessionRequest, "additional_directories")
    assert not hasattr(stable, "ForkSessionRequest") and "UNSTABLE" in (unstable.ForkSessionRequest.__doc__ or "")
    with pytest.raises(ValidationError):
        TypeAdapter(stable.SessionMode).validate_python("plan")
    assert TypeAdapter(unstable.SessionMode).validate_python("plan") == "plan"
    with pytest.raises(ValidationError):
        TypeAdapter(stable.Update).validate_python({"kind": "plan", "steps": []})
    assert type(TypeAdapter(unstable.Update).validate_python({"kind": "plan", "steps": []})).__name__ == "PlanUpdate"


def test_fixture_single_file_revision_splits_by_marker(golden_path: None) -> None:
    stable, unstable = golden_models("single-file", "stable"), golden_models("single-file", "unstable")
    assert "additional_directories" not in stable.NewSessionRequest.model_fields
    assert "additional_directories" in unstable.NewSessionRequest.model_fields
    assert not hasattr(stable, "ForkSessionRequest") and hasattr(unstable, "ForkSessionRequest")
    assert not hasattr(stable, "Plan") and hasattr(unstable, "PlanUpdate")


def test_the_goldens_leave_out_only_the_runtimes_exact_copies() -> None:
    files = rendered("unions")
    copy = next(rel for rel in files if rel.endswith("/_runtime/connection/connection.py"))
    assert copy not in schema_decided(files) and "unions_stable/models.py" in schema_decided(files)
    for broken in ({**files, copy: files[copy] + "# edited\n"}, {k: v for k, v in files.items() if k != copy}):
        with pytest.raises(AssertionError, match="runtime"):
            schema_decided(broken)
