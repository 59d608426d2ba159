"""The experimental protocol v2 build (issue 14, item 5): `acpgen generate --protocol 2` builds the
draft v2 schema the pinned package ships into `generated/acp_bindings_v2` (and `_unstable`),
marked experimental, with its own capability rule table; a v2 agent and a v2 client built from it
talk over real pipes; a v1 agent is refused; the v1 -> v2 diff reads as a migration report."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from acpgen.commands import main
from tests.support.goldens import check_goldens

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
V2 = ROOT / "schema" / "v2"
AGENT_V2 = [sys.executable, str(ROOT / "tests" / "support" / "peers" / "echo_agent_v2.py")]
AGENT_V1 = [sys.executable, str(ROOT / "examples" / "echo_agent.py")]


def _package(name: str) -> ModuleType:
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(name)


def _schema_methods(name: str) -> set[str]:
    defs = json.loads((V2 / name).read_text(encoding="utf-8"))["$defs"]
    return {d["x-method"] for d in defs.values() if "x-method" in d}


@pytest.mark.parametrize(
    ("package", "schema", "variant"),
    [("acp_bindings_v2", "schema.json", "stable"), ("acp_bindings_v2_unstable", "schema.unstable.json", "unstable")],
)
def test_the_v2_packages_hold_the_v2_methods_and_say_they_are_experimental(
    package: str, schema: str, variant: str
) -> None:
    version = _package(f"{package}._version")
    methods = _package(f"{package}.methods")
    built = {"protocol": version.PROTOCOL_VERSION, "experimental": version.EXPERIMENTAL, "variant": version.VARIANT}
    assert built == {"protocol": 2, "experimental": True, "variant": variant}
    assert version.SCHEMA_FILE.endswith(f"v2/{schema}")
    assert {m.wire for m in methods.METHODS} == _schema_methods(schema)
    wires = {m.wire for m in methods.METHODS}
    assert {"tool_call/cancel", "terminal/cancel", "session/delete", "auth/login"} <= wires
    assert not {w for w in wires if w.startswith("fs/")} and "authenticate" not in wires
    assert "EXPERIMENTAL" in (GENERATED / package / "__init__.py").read_text(encoding="utf-8").splitlines()[0]


def test_the_v1_packages_are_not_experimental() -> None:
    for package in ("acp_bindings", "acp_bindings_unstable"):
        version = _package(f"{package}._version")
        assert (version.PROTOCOL_VERSION, version.EXPERIMENTAL) == (1, False)


def test_the_v2_rule_table_gates_what_the_v2_schema_gates() -> None:
    capabilities = _package("acp_bindings_v2.capabilities")
    rules = {f"{r.kind}:{r.subject}": r.capability.path for r in capabilities.RULES}
    assert rules["method:session/new"] == "agentCapabilities.session"
    assert rules["method:session/delete"] == "agentCapabilities.session.delete"
    assert rules["variant:ContentBlock[image]"] == "agentCapabilities.session.prompt.image"
    assert rules["variant:McpServer[stdio]"] == "agentCapabilities.session.mcp.stdio"
    assert rules["method:elicitation/create"] == "clientCapabilities.elicitation"
    assert not any("fork" in s or "providers" in s for s in rules), "unstable rules stay out of the stable build"
    unstable = _package("acp_bindings_v2_unstable.capabilities")
    assert {f"{r.kind}:{r.subject}" for r in unstable.RULES} >= {"method:session/fork", "method:providers/list"}


class _Collector:
    """A v2 client that keeps the text of the agent's message chunks."""

    def __init__(self, client_base: type) -> None:
        models = _package("acp_bindings_v2.models")
        builders = _package("acp_bindings_v2.builders")
        chunks: list[str] = []

        class Client(client_base):  # type: ignore[misc, valid-type]
            async def update_session(self, params: Any) -> None:
                update = params.update
                if isinstance(update, models.AgentMessageChunkSessionUpdate):
                    await asyncio.sleep(0.001)  # a handler that awaits: the order must still hold
                    chunks.append(update.content.text)

            async def request_permission(self, params: Any) -> Any:
                return builders.request_permission_response(builders.cancelled_request_permission_outcome())

        self.client = Client()
        self.chunks = chunks


def test_a_v2_client_and_a_v2_agent_talk_over_pipes() -> None:
    builders = _package("acp_bindings_v2.builders")
    models = _package("acp_bindings_v2.models")
    interfaces = _package("acp_bindings_v2.interfaces")
    serve = _package("acp_bindings_v2.serve")
    capabilities = _package("acp_bindings_v2.capabilities")
    collector = _Collector(interfaces.Client)

    async def run() -> tuple[Any, Any, str]:
        async with serve.spawn_agent(AGENT_V2, collector.client) as agent:
            info = models.Implementation(name="test-client", version="1")
            answer = await agent.initialize(builders.initialize_request(2, info))
            session = await agent.new_session(builders.new_session_request(os.getcwd()))
            words = " ".join(f"w{i}" for i in range(50))
            result = await agent.prompt(
                builders.prompt_request(session.session_id, [builders.text_content_block(words)])
            )
            with pytest.raises(capabilities.CapabilityError, match=r"session\.delete"):
                await agent.delete_session(builders.delete_session_request(session.session_id))
            return answer, result, words

    answer, result, words = asyncio.run(asyncio.wait_for(run(), 60))
    assert answer.protocol_version == 2 and answer.info.name == "echo-agent-v2"
    assert result.message_id.startswith("m-")
    assert "".join(collector.chunks).split() == words.split(), "every chunk, in order, before prompt() returned"


def test_a_v2_client_refuses_a_v1_agent() -> None:
    builders = _package("acp_bindings_v2.builders")
    models = _package("acp_bindings_v2.models")
    interfaces = _package("acp_bindings_v2.interfaces")
    serve = _package("acp_bindings_v2.serve")
    initialization = _package("acp_bindings_v2.initialization")
    collector = _Collector(interfaces.Client)

    async def run() -> None:
        async with serve.spawn_agent(AGENT_V1, collector.client) as agent:
            info = models.Implementation(name="test-client", version="1")
            await agent.initialize(builders.initialize_request(2, info))

    with pytest.raises(initialization.UnsupportedVersionError, match="protocol version 1"):
        asyncio.run(asyncio.wait_for(run(), 60))


def test_generate_protocol_2_writes_the_v2_packages_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["generate", "--protocol", "2", "--both", "--strict-capabilities", "--out", str(out), "--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["acp_bindings_v2", "acp_bindings_v2_unstable"]
    for package in ("acp_bindings_v2", "acp_bindings_v2_unstable"):
        for path in sorted((out / package).rglob("*.py")):
            assert path.read_bytes() == (GENERATED / package / path.relative_to(out / package)).read_bytes(), path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--protocol", "3"], "acpgen builds protocol versions 1, 2, not 3"),
        (["--protocol", "2", "--unstable-feature", "session_fork"], "protocol v2 has no unstable features yet"),
    ],
)
def test_bad_protocol_requests_exit_2_and_write_nothing(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["generate", *args, "--out", str(out), "--force"]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_the_v1_to_v2_migration_report_matches_its_golden(
    update_goldens: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`acpgen diff schema/v1 schema/v2 --format markdown`: the report docs/protocol-v2.md points to, kept in
    tests/golden/migration-v1-v2/ (update with --update-goldens after a schema bump)."""
    monkeypatch.chdir(ROOT)
    assert main(["diff", "schema/v1", "schema/v2", "--format", "markdown"]) == 0
    report = capsys.readouterr().out
    assert report.startswith("### ACP spec diff: `@agentclientprotocol/sdk@")
    check_goldens(
        {"report.md": report},
        ROOT / "tests" / "golden" / "migration-v1-v2",
        update=update_goldens,
        label="the v1 -> v2 migration report",
        update_with="make goldens (or: uv run --frozen pytest tests/generated/test_protocol_v2.py --update-goldens)",
    )


def test_the_v1_to_v2_diff_is_a_migration_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    shutil.copytree(ROOT / "schema" / "v1", v1)
    shutil.copytree(V2, v2)
    assert main(["diff", str(v1), str(v2), "--format", "json"]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    said = {(f["rule"], f["item"]): f for f in findings}
    assert said[("method-renamed", "method:agent:auth/login")]["old"] == "authenticate"
    assert ("method-removed", "method:client:fs/read_text_file") in said
    assert ("method-added", "method:agent:tool_call/cancel") in said
    assert ("field-renamed", "field:InitializeRequest.capabilities") in said


def test_vendor_protocol_2_writes_an_experimental_copy_that_check_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    command = ["vendor", "--package", "app._acp2", "--out", "app/_acp2", "--protocol", "2"]
    assert main(command) == 0
    copy = tmp_path / "app" / "_acp2"
    record = json.loads((copy / "_vendor.json").read_text(encoding="utf-8"))
    assert record["protocol"] == 2 and record["schema"]["file"] == "v2/schema.json"
    assert record["command"] == "acpgen vendor --package app._acp2 --protocol 2 --out <this folder>"
    assert "EXPERIMENTAL: Final = True" in (copy / "_version.py").read_text(encoding="utf-8")
    assert main(["vendor", "--check", "--out", "app/_acp2"]) == 0
    (copy / "methods.py").write_text("# edited\n", encoding="utf-8")
    assert main(["vendor", "--check", "--out", "app/_acp2"]) == 1
