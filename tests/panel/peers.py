"""The third-party peers of the conformance panel and how each is run under the kit.

Every peer comes from a registry, pinned: the official Python SDK (``agent-client-protocol``, a dev
dependency in uv.lock), the official TypeScript SDK (``tests/interop``, ``make interop-deps``), and
in ``tests/panel`` (``make panel-deps``) acpx as a client and codex-acp as a coding agent. Neither
SDK ships an example agent or client, so their peers are the echo agent and client written on each
SDK's public API as its documentation shows (``tests/support/peers/sdk_echo_*.py``,
``tests/interop/conformance_echo_*.mjs``).

codex-acp talks to a model through the mock model server of ``tests/support/mock_model.py``: a
throwaway ``CODEX_HOME`` whose only provider is the mock (every base URL codex knows points there,
no update check, no analytics, no feedback), a fake key in the provider's ``env_key``, ``HOME`` in
the run's folder, and every proxy variable pointing at the mock, which records any request made
through it: nothing of the run can reach the network, and a test checks that the model calls all
came to the mock.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.support import mock_model
from tests.support.sdk import node

PANEL = ROOT / "tests" / "panel"
FIX = "run `make panel-deps` (npm ci --prefix tests/panel --no-audit --no-fund; needs the network once)"

WORDS = 8000
"""Words of the echo agents' ``--cancel-prompt``: a turn long enough that the kit's cancel lands in
it (about 0.6 s on the TypeScript SDK, 1 s on the Python SDK, quiet machine), short enough that,
left alone, it ends well within ``--timeout``: an agent that does not implement the optional
``$/cancel_request`` still answers the request, when its turn ends."""
SDK_AGENT_OPTIONS = ("--timeout", "5", "--close-grace", "1", "--cancel-prompt", " ".join(["w"] * WORDS))
CLIENT_OPTIONS = ("--scenario-timeout", "60")
SCRUBBED = ("OPENAI_", "CODEX_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "ACP_")
"""Environment variables no peer inherits: credentials and settings of real model providers, and
the kit's own (it sets those it means)."""


@dataclass
class Prepared:
    """A peer ready to run: the kit's arguments after its mode, the environment, and what to
    collect once the run is over (the mock model's calls)."""

    argv: list[str]
    env: dict[str, str]
    collect: Callable[[], dict[str, Any]] = field(default=lambda: {})


@dataclass(frozen=True)
class Peer:
    name: str
    mode: str
    what: str
    prepare: Callable[[Path, contextlib.ExitStack], Prepared]


def _env(work: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED)}
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {**env, "HOME": str(home), **extra}


def _cwd(work: Path) -> str:
    cwd = work / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    return str(cwd)


def panel_package(name: str) -> Path:
    """The folder of an npm package of ``tests/panel``, installed at the pinned version; the calling
    test fails (never skips) otherwise."""
    pinned = json.loads((PANEL / "package.json").read_text(encoding="utf-8"))["dependencies"][name]
    manifest = PANEL / "node_modules" / name / "package.json"
    if not manifest.is_file():
        pytest.fail(f"{name}@{pinned} is not installed in tests/panel/node_modules: {FIX}")
    installed = json.loads(manifest.read_text(encoding="utf-8"))["version"]
    if installed != pinned:
        pytest.fail(f"tests/panel/node_modules holds {name}@{installed}, tests/panel/package.json pins {pinned}: {FIX}")
    return manifest.parent


def _python_sdk_agent(work: Path, stack: contextlib.ExitStack) -> Prepared:
    agent = ROOT / "tests" / "support" / "peers" / "sdk_echo_agent.py"
    argv = [*SDK_AGENT_OPTIONS, "--agent-cwd", _cwd(work), "--", sys.executable, str(agent)]
    return Prepared(argv, _env(work))


def _typescript_sdk_agent(work: Path, stack: contextlib.ExitStack) -> Prepared:
    agent = ROOT / "tests" / "interop" / "conformance_echo_agent.mjs"
    argv = [*SDK_AGENT_OPTIONS, "--agent-cwd", _cwd(work), "--", node(), str(agent)]
    return Prepared(argv, _env(work))


def _python_sdk_client(work: Path, stack: contextlib.ExitStack) -> Prepared:
    client = ROOT / "tests" / "support" / "peers" / "sdk_echo_client.py"
    argv = [*CLIENT_OPTIONS, "--agent-cwd", _cwd(work), "--", sys.executable, str(client), "{agent}"]
    return Prepared(argv, _env(work))


def _typescript_sdk_client(work: Path, stack: contextlib.ExitStack) -> Prepared:
    client = ROOT / "tests" / "interop" / "conformance_echo_client.mjs"
    argv = [*CLIENT_OPTIONS, "--agent-cwd", _cwd(work), "--", node(), str(client), "{agent}"]
    return Prepared(argv, _env(work))


def _acpx_client(work: Path, stack: contextlib.ExitStack) -> Prepared:
    """acpx's one-shot prompt (``exec``) against the probe agent, given as acpx's ``--agent`` command
    line (the kit's ``ACP_CONFORMANCE_AGENT``, shell-quoted), allowing every permission."""
    cli = panel_package("acpx") / "dist" / "cli.js"
    acpx = f"exec {shlex.quote(node())} {shlex.quote(str(cli))}"
    line = f'{acpx} --approve-all --agent "$ACP_CONFORMANCE_AGENT" exec hello'
    argv = [*CLIENT_OPTIONS, "--agent-cwd", _cwd(work), "--", "sh", "-c", line]
    return Prepared(argv, _env(work))


CODEX_MODEL = "gpt-5.4-mini"
"""A model codex knows (its metadata is built in): with an unknown name codex says so in every
session's first message. Only the mock answers it."""
CODEX_OPTIONS = ("--timeout", "3", "--close-grace", "0.5", "--auth-method", "codex-api-key")
"""codex-acp does not exit when its stdin closes (ACP-AGENT-PROC-001 FAILs whatever the grace):
half a second keeps each of its 19 scenarios short; a 3 s timeout keeps the two that wait for an
answer that never comes (ids -7 and null) short, and the mock's slow turn ends within it. It
authenticates with its ``codex-api-key`` method (a fake ``CODEX_API_KEY``, kept in the throwaway
``CODEX_HOME``), so that the authentication requirements are exercised."""


def codex_config(base_url: str) -> str:
    """The ``config.toml`` of the throwaway ``CODEX_HOME``: the mock is the only provider."""
    quoted = json.dumps(base_url)
    return "\n".join(
        [
            f"model = {json.dumps(CODEX_MODEL)}",
            'model_provider = "acpgen-panel-mock"',
            f"openai_base_url = {quoted}",
            f"chatgpt_base_url = {quoted}",
            "check_for_update_on_startup = false",
            'web_search = "disabled"',
            "",
            "[model_providers.acpgen-panel-mock]",
            'name = "acpgen panel mock model"',
            f"base_url = {quoted}",
            'wire_api = "responses"',
            'env_key = "ACPGEN_PANEL_MODEL_KEY"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "supports_websockets = false",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
        ]
    )


def _codex_acp(work: Path, stack: contextlib.ExitStack) -> Prepared:
    binary = panel_package("@zed-industries/codex-acp") / "bin" / "codex-acp.js"
    model = mock_model.MockModel()
    base_url = stack.enter_context(mock_model.serving(model))
    home = work / "codex-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(codex_config(base_url), encoding="utf-8")
    proxy = base_url.removesuffix(model.prefix)  # anything sent through a proxy lands in the mock
    env = _env(
        work,
        CODEX_HOME=str(home),
        CODEX_API_KEY=mock_model.API_KEY,
        ACPGEN_PANEL_MODEL_KEY=mock_model.API_KEY,
        HTTP_PROXY=proxy,
        HTTPS_PROXY=proxy,
        ALL_PROXY=proxy,
        http_proxy=proxy,
        https_proxy=proxy,
        all_proxy=proxy,
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    prompt = f"{mock_model.SLOW}: take your time"
    argv = [*CODEX_OPTIONS, "--cancel-prompt", prompt, "--agent-cwd", _cwd(work), "--", node(), str(binary)]
    return Prepared(argv, env, lambda: {"model_calls": [asdict(call) for call in model.recorded()]})


PEERS = {
    peer.name: peer
    for peer in (
        Peer("python-sdk-agent", "agent", "echo agent on agent-client-protocol 0.12.1 (PyPI)", _python_sdk_agent),
        Peer("python-sdk-client", "client", "client on agent-client-protocol 0.12.1 (PyPI)", _python_sdk_client),
        Peer("typescript-sdk-agent", "agent", "echo agent on @agentclientprotocol/sdk (npm)", _typescript_sdk_agent),
        Peer("typescript-sdk-client", "client", "client on @agentclientprotocol/sdk (npm)", _typescript_sdk_client),
        Peer("acpx", "client", "acpx 0.15.1 (npm), `exec` with --approve-all", _acpx_client),
        Peer("codex-acp", "agent", "@zed-industries/codex-acp 0.16.0 (npm) on the mock model", _codex_acp),
    )
}


@contextlib.contextmanager
def prepared(peer: Peer, work: Path) -> Iterator[Prepared]:
    with contextlib.ExitStack() as stack:
        yield peer.prepare(work, stack)
