"""The generated packages import nothing but pydantic, the server half of ``remote`` included
(``asgi_app``, ``AcpApp``, ``Request``, the limits, ``Refused``): a server needs only an ASGI
server. The client half, ``connect_agent``, needs the ``remote`` extra (httpx with h2, websockets)
and, without it, its import raises an ImportError that names the extra and the exact command
installing it (issue 21, item 3; issue 30, item 6)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from acp_bindings import PROTOCOL_VERSION, builders
from acp_bindings.remote import Refused, connect_agent

from acpgen.runtime.remote.deps import REQUIREMENTS
from tests.conftest import GENERATED, ROOT
from tests.support.floor_envs import clean_env, locks, python, vendored
from tests.support.remote import TIMEOUT, TurnClient

pytestmark = pytest.mark.slow

NETWORK = {"httpx", "h2", "websockets", "wsproto", "uvicorn", "anyio"}
EXTRA = (
    "needs httpx (with h2) and websockets, the 'remote' extra, which are not installed:"
    " pip install 'httpx[http2]==0.28.1' 'websockets==17.4' 'sniffio==1.3.1'"
)

EVERY_MODULE_BUT_THE_CLIENT = """
import importlib, pkgutil, sys
import acp_bindings
client = ("acp_bindings._runtime.remote.connect", "acp_bindings._runtime.remote.http_client",
          "acp_bindings._runtime.remote.websocket_client", "acp_bindings._runtime.remote.http_library",
          "acp_bindings._runtime.remote.websocket_library", "acp_bindings._runtime.remote.http_requests",
          "acp_bindings._runtime.remote.transports")
imported = []
for info in pkgutil.walk_packages(acp_bindings.__path__, "acp_bindings."):
    if info.name not in client:
        importlib.import_module(info.name)
        imported.append(info.name)
assert "acp_bindings._runtime.remote.app" in imported and "acp_bindings.models" in imported, imported
third_party = sorted({m.split(".")[0] for m in sys.modules} & NETWORK)
print(",".join(third_party))
"""

WITHOUT_THE_EXTRA = """
import sys
sys.modules["httpx"] = None  # as if not installed
from acp_bindings.remote import AcpApp, Refused, RemoteLimits, Request, ResumeLimits, asgi_app
import acp_bindings.remote
assert not hasattr(acp_bindings.remote, "nothing")  # an AttributeError, not the extra's ImportError
said = []
for attempt in ("from acp_bindings.remote import connect_agent", "from acp_bindings import connect_agent"):
    try:
        exec(attempt, {})
    except ImportError as error:
        said.append(str(error))
    else:
        raise SystemExit("imported without httpx: " + attempt)
print("\\n".join(said))
"""


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=GENERATED, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_every_module_but_the_client_imports_no_network_package() -> None:
    assert _python(f"NETWORK = set({sorted(NETWORK)!r})\n" + EVERY_MODULE_BUT_THE_CLIENT) == ""


def test_the_client_half_without_its_extra_names_the_exact_install_command() -> None:
    said = _python(WITHOUT_THE_EXTRA).splitlines()
    assert said == [f"acp_bindings.remote {EXTRA}"] * 2


def test_the_client_half_with_its_extra_is_connect_agent() -> None:
    from acp_bindings import remote

    assert connect_agent is remote.connect_agent and connect_agent.__module__ == "acp_bindings.remote"
    assert "connect_agent" in remote.__all__ and "connect_agent" not in vars(remote)  # asked for, not held
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        remote.nothing  # noqa: B018 - the module's __getattr__ knows only connect_agent


def test_the_error_names_the_pins_of_the_remote_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert tuple(project["project"]["optional-dependencies"]["remote"]) == REQUIREMENTS
    dev = project["dependency-groups"]["dev"]
    assert all(pin in dev for pin in REQUIREMENTS), "the dev group installs the remote extra for the tests"


async def _turn(url: str, profile: str, headers: dict[str, str]) -> str:
    client = TurnClient()
    async with connect_agent(url, client, transport=profile, headers=headers) as agent:  # type: ignore[arg-type]
        await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
        session = (await agent.new_session(builders.new_session_request("/w", []))).session_id
        prompt = [builders.text_content_block("served without the extra")]
        result = await agent.prompt(builders.prompt_request(session, prompt))
    return "".join(client.chunks[session]) + f"({result.stop_reason})"


def test_a_server_that_only_serves_runs_under_uvicorn_without_httpx_or_websockets(tmp_path: Path) -> None:
    """A fresh environment with pydantic (the floor) and uvicorn, and neither httpx nor
    websockets: the vendored ``asgi_app`` imports and serves; our client (this process, with the
    extra) plays a turn against it over Streamable HTTP, and is refused with the exception of
    every refusal where the server refuses (no token: 401; a WebSocket upgrade, which this
    uvicorn cannot serve without a WebSocket library: 426)."""
    interpreter = python(locks()[0])
    src = vendored(tmp_path, "serve.py")
    log = (tmp_path / "server.log").open("w+", encoding="utf-8")
    server = subprocess.Popen(
        [str(interpreter), "serve.py"],
        cwd=src,
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        log.seek(0)
        assert line, log.read()
        report = json.loads(line)
        assert report["network"] == [], "the server half imported a network package"
        assert report["client_half"] == [f"myapp._acp.remote {EXTRA}"] * 2
        url = f"http://127.0.0.1:{report['port']}/acp"
        token = {"Authorization": "Bearer floor"}
        served = asyncio.run(asyncio.wait_for(_turn(url, "http", token), TIMEOUT))
        assert served == "served without the extra (end_turn)"
        with pytest.raises(Refused) as caught:
            asyncio.run(asyncio.wait_for(_turn(url, "http", {}), TIMEOUT))
        assert (caught.value.status, caught.value.message) == (401, "Unauthorized")
        with pytest.raises(Refused) as caught:
            asyncio.run(asyncio.wait_for(_turn(url, "ws", token), TIMEOUT))
        assert (caught.value.status, caught.value.message) == (426, "WebSocket upgrade is not available here")
    finally:
        assert server.stdin is not None
        server.stdin.close()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
    assert server.returncode == 0, (tmp_path / "server.log").read_text(encoding="utf-8")
