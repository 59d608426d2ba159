"""A regeneration that cannot change anything is skipped; any changed input or output is not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acpgen.commands import main

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).parents[1] / "fixtures" / "unions" / "schema.json"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\ncache-dir = "cache"\noutput-dir = "out"\n')
    shutil.copy(FIXTURE, tmp_path / "schema.json")
    return tmp_path


def generate(project: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code = main(
        ["--config", str(project / "pyproject.toml"), "generate", "--schema", str(project / "schema.json"), *extra]
    )
    assert code == 0
    return capsys.readouterr().err


def test_unchanged_inputs_skip_rendering(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "wrote" in generate(project, capsys)
    assert "up to date (no input changed" in generate(project, capsys)
    assert list((project / "cache").iterdir()), "the stamp lives in the cache folder"
    assert not any(p.name.startswith("generate-") for p in (project / "out").rglob("*")), "no stamp in the output"


def test_a_fresh_clone_regenerates_without_claiming_to_write_what_it_left_unchanged(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clone holds the committed output but no stamp (the cache is not committed): its first
    `make generate` renders, finds every file as it is, writes nothing and says so (issue 23)."""
    generate(project, capsys)
    shutil.rmtree(project / "cache")  # as in a fresh clone
    models = project / "out" / "acp_bindings" / "models.py"
    before = models.stat().st_mtime_ns
    said = generate(project, capsys)
    assert "out is up to date (rendered " in said and "none changed" in said and "wrote" not in said, said
    assert models.stat().st_mtime_ns == before
    assert "up to date (no input changed" in generate(project, capsys), "the run recorded its stamp"


def test_a_changed_input_renders_again(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    generate(project, capsys)
    schema = project / "schema.json"
    schema.write_text(schema.read_text().replace('"A circle."', '"A round shape."'))
    assert "wrote" in generate(project, capsys)
    assert "A round shape." in (project / "out" / "acp_bindings" / "models.py").read_text()


def test_an_edited_or_deleted_output_renders_again(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    generate(project, capsys)
    models = project / "out" / "acp_bindings" / "models.py"
    original = models.read_text()
    models.write_text(original + "# local edit\n")
    assert "wrote" in generate(project, capsys)
    assert models.read_text() == original
    (project / "out" / "acp_bindings" / "errors.py").unlink()
    assert "wrote" in generate(project, capsys)


def test_force_and_check_always_render(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    generate(project, capsys)
    assert "wrote" in generate(project, capsys, "--force")
    checked = generate(project, capsys, "--check")
    assert "is up to date" in checked and "no input changed" not in checked


def test_tool_versions_are_read_as_the_package_metadata_says() -> None:
    from importlib.metadata import version

    from acpgen.versions import installed_version

    for tool in ("datamodel-code-generator", "ruff", "pydantic", "jinja2", "pydantic_core", "acpgen"):
        assert installed_version(tool) == version(tool), tool
    assert installed_version("no-such-distribution-anywhere") is None


@pytest.mark.parametrize("data_file", ["features/manifest.schema.json", "runtime/ruff.toml"])
def test_every_file_of_the_generator_is_an_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_file: str
) -> None:
    """The generator's data files shape the output as its code does (the manifest's schema decides
    what loads, the runtime's ruff settings how its copies read): editing one renders again.
    Caches inside the generator's folder are not inputs."""
    from acpgen.output import freshness

    copy = tmp_path / "acpgen"
    shutil.copytree(freshness.GENERATOR, copy, ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache"))
    monkeypatch.setattr(freshness, "GENERATOR", copy)
    before = freshness.fingerprint([], {})
    for cache in (copy / "__pycache__", copy / "runtime" / ".ruff_cache"):
        cache.mkdir(exist_ok=True)
        (cache / "entry").write_bytes(b"anything")
    assert freshness.fingerprint([], {}) == before, "a cache is not an input"
    edited = copy / data_file
    edited.write_bytes(edited.read_bytes() + b"\n")
    assert freshness.fingerprint([], {}) != before, f"{data_file} is an input"
