"""The third-party packages the remote client needs, and the error that names them.

Support code: it knows no method of the protocol. The rest of a generated package
imports only pydantic; its ``remote`` module needs ``httpx`` (with ``h2``, for
Streamable HTTP) and ``websockets``, the ``remote`` extra of acpgen (which pins
``sniffio`` too, for speed: see ``REQUIREMENTS``). A vendored package
has no extras of its own, so the error gives the exact command to install them.

The client's transports reach these packages through ``http_library`` and
``websocket_library``, whose stubs (``.pyi``) type what the runtime uses of them: a
project's type checker accepts their absence, and the runtime is checked against the
packages themselves where they are installed (``tests/system/test_vendored_types.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

__all__ = ["MODULES", "REQUIREMENTS", "client_half", "missing_extra", "require"]

REQUIREMENTS = ("httpx[http2]==0.28.1", "websockets==17.4", "sniffio==1.3.1")
"""The versions tested (pinned as acpgen's ``remote`` extra); newer compatible ones
work too. sniffio is not needed to work: without it httpcore 1.0 tries to import it
again for every lock it sets up (Python does not remember a failed import), about
40-60 us of CPU each, four per POST (``docs/performance.md``, T6)."""

MODULES = ("h2", "httpx", "websockets")
"""What the client's transports import (httpx speaks HTTP/2 with h2)."""


def missing_extra(module: str) -> ImportError:
    """The error for a module of a package (a runtime module, or its public ``remote``)
    imported without the ``remote`` extra: it names the packages and the command that
    installs them."""
    above, runtime, _ = module.partition("._runtime.")
    package = above if runtime else module.rpartition(".")[0]
    command = "pip install " + " ".join(f"'{r}'" for r in REQUIREMENTS)
    return ImportError(
        f"{package}.remote needs httpx (with h2) and websockets, the 'remote' extra,"
        f" which are not installed: {command}"
    )


def require(module: str) -> None:
    """Import the extra's packages; without them, the error that names the extra (for
    ``module``, the runtime module that needs them)."""
    try:
        for name in MODULES:
            importlib.import_module(name)
    except ImportError as error:  # the remote extra is not installed
        raise missing_extra(module) from error


def client_half(module: str, offered: Mapping[str, Any], name: str) -> Any:
    """``offered[name]``, a name of the generated ``remote`` module (``module``) that
    needs the extra, once the extra's packages are found (an ImportError naming the
    extra, without them); AttributeError for a name it does not offer. The module's
    ``__getattr__``."""
    if name not in offered:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    require(module)
    return offered[name]
