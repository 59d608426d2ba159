"""The README's agent and client, as the README prints them (issue 45, item 3): saved in a project
of their own with the bindings vendored as ``myapp._acp``, the kit finds each CONFORMANT with no
finding at all (no FAIL, ADVISORY ones included: the agent connects to the MCP servers it is
handed, the client says who it is and what it offers and answers permission requests with an
option the agent offered)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import pytest

from tests.support.kit import LONG_PROMPT, failed, kit, report
from tests.system.test_readme import README_BLOCKS

pytestmark = pytest.mark.slow

AGENT = next(b for b in README_BLOCKS if b.mode == "save" and b.argument == "my_agent.py")
CLIENT = next(b for b in README_BLOCKS if "class MyClient(Client)" in b.code and "spawn_agent" in b.code)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    from acpgen.commands import main

    folder = tmp_path_factory.mktemp("readme-kit")
    (folder / "src" / "myapp").mkdir(parents=True)
    (folder / "src" / "myapp" / "__init__.py").write_text("", encoding="utf-8")
    with contextlib.chdir(folder):
        assert main(["vendor", "--package", "myapp._acp", "--out", "src/myapp/_acp"]) == 0
    (folder / "my_agent.py").write_text(AGENT.code, encoding="utf-8")
    (folder / "my_client.py").write_text(CLIENT.code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "ACP_TRACE")}
    return folder, env | {"PYTHONPATH": str(folder / "src")}


def test_the_readme_agent_conforms_with_no_finding(project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    done = kit(
        "agent", "--cancel-prompt", LONG_PROMPT, "--report-json", str(folder / "agent.json"),
        "--", sys.executable, "my_agent.py", cwd=folder, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("VERDICT: CONFORMANT")
    found = report(folder / "agent.json")
    assert failed(found) == set(), done.stdout
    assert {r["id"]: r["status"] for r in found["requirements"]}["ACP-AGENT-SESSION-005"] == "PASS"


def test_the_readme_client_conforms_with_no_finding(project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    done = kit(
        "client", "--report-json", str(folder / "client.json"), "--", sys.executable, "my_client.py", "{agent}",
        cwd=folder, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("VERDICT: CONFORMANT")
    assert failed(report(folder / "client.json")) == set(), done.stdout
