"""One registry of the remote client's transports (issue 44, item 5): ``remote/transports.py``
names every profile once, its type and its ``dial`` agree, and the client opens a connection only
through it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import get_args

import pytest

from acpgen.runtime.remote import transports
from acpgen.runtime.remote.transports import TRANSPORTS, Dialer, Profile, checked


def test_every_profile_has_its_dial_and_every_dial_its_profile() -> None:
    assert list(get_args(Profile)) == list(TRANSPORTS) == ["ws", "http"]


@pytest.mark.parametrize("profile", list(TRANSPORTS))
def test_each_dial_takes_what_the_registry_gives(profile: str) -> None:
    dial = TRANSPORTS[profile]  # type: ignore[index]
    assert inspect.iscoroutinefunction(dial)
    wanted = inspect.signature(Dialer.__call__).parameters
    given = inspect.signature(dial).parameters
    assert [(p.name, p.kind) for p in given.values()] == [(p.name, p.kind) for p in list(wanted.values())[1:]]


def test_an_unknown_profile_is_refused_naming_the_known_ones() -> None:
    assert checked("http") == "http"
    with pytest.raises(ValueError, match=r"transport is 'ws' or 'http', not 'tcp'"):
        checked("tcp")


def test_the_client_opens_a_connection_through_the_registry_only() -> None:
    """No other module of the remote package imports a client transport: none picks one."""
    clients = {module.rsplit(".", 1)[1] for module in (d.__module__ for d in TRANSPORTS.values())}
    assert clients == {"websocket_client", "http_client"}
    for path in sorted(Path(transports.__file__).parent.glob("*.py")):
        if path.name == "transports.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                imported = {node.module} if node.module else {alias.name for alias in node.names}
                assert not imported & clients, f"{path.name} imports {sorted(imported & clients)}"
