"""A regeneration that cannot change anything is skipped; any changed input or output is not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acpgen.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "unions" / "schema.json"


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
