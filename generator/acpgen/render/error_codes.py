"""Template data for ``errors.py``: the protocol's error codes, from the schema's ``ErrorCode``.

The runtime (``wire/rpc.py``) has the standard JSON-RPC codes the dispatcher answers with; a schema
code of the same name must have the same value (else generation fails), and is written as the
runtime's constant, so that ``errors`` and the runtime never disagree. A standard code that the
schema does not list is still exported, as the runtime has it.
"""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir
from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.render.unstable import UNSTABLE_NOTE
from acpgen.runtime.wire import rpc as _rpc

RUNTIME_DOC = "A standard JSON-RPC error code, as the runtime answers with it."


@dataclass(frozen=True, slots=True)
class CodeView:
    """One constant of ``errors.py``."""

    constant: str
    value: int
    title: str
    doc: str
    runtime: bool
    """The runtime defines it: written as ``_rpc.<constant>``."""


def runtime_codes() -> dict[str, int]:
    """The error codes the runtime module ``wire/rpc.py`` defines, by name."""
    return {name: value for name in _rpc.__all__ if isinstance(value := getattr(_rpc, name), int)}


def error_code_views(protocol: ir.Protocol) -> tuple[CodeView, ...]:
    """The schema's named codes in schema order, then the runtime's codes that the schema lacks."""
    runtime = runtime_codes()
    views: list[CodeView] = []
    for code in protocol.error_codes:
        if not code.constant:
            continue
        if code.constant in runtime and runtime[code.constant] != code.value:
            raise AcpgenError(_mismatch(code, runtime[code.constant]))
        if any(v.constant == code.constant for v in views):
            raise AcpgenError(_duplicate(code))
        doc = code.description if code.stable else f"{UNSTABLE_NOTE}\n\n{code.description}"
        views.append(
            CodeView(
                constant=code.constant, value=code.value, title=code.title, doc=doc, runtime=code.constant in runtime
            )
        )
    named = {v.constant for v in views}
    views += [
        CodeView(constant=name, value=value, title="", doc=RUNTIME_DOC, runtime=True)
        for name, value in sorted(runtime.items())
        if name not in named
    ]
    return tuple(views)


def _mismatch(code: ir.ErrorCode, runtime: int) -> Problem:
    return Problem(
        what=f"the schema's ErrorCode gives {code.title!r} the code {code.value}, the JSON-RPC runtime uses {runtime}",
        where=pointer("$defs", "ErrorCode"),
        hint="A standard JSON-RPC code cannot change; check the schema (or the runtime module wire/rpc.py).",
    )


def _duplicate(code: ir.ErrorCode) -> Problem:
    return Problem(
        what=f"two codes of the schema's ErrorCode would both be named {code.constant}",
        where=pointer("$defs", "ErrorCode"),
        hint="Give the codes distinct titles in the schema.",
    )
