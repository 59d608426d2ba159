"""The validators and serializers of the method table's models, built once per process.

Support code: it knows no method of the protocol. The dispatcher (params and results of
the methods a handler answers) and the typed senders (params and results of the methods
they call) read and write a method's models through a pydantic ``TypeAdapter``; building
one builds the model's core schema, its validator and its serializer, tens of KiB and
milliseconds each. They are built on a model's first use and shared by every
connection of the process, so that an idle connection holds none of its own. The table
is bounded by the models of the method table.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

__all__ = ["built"]

_BUILT: dict[Any, TypeAdapter[Any]] = {}


def built(model: Any) -> TypeAdapter[Any]:
    """The adapter of ``model`` (a model class or a union of them), its validator and
    serializer built: the same one for every connection."""
    adapter = _BUILT.get(model)
    if adapter is None:
        adapter = TypeAdapter(model)
        adapter.rebuild()  # build the deferred schema now: its validator and serializer
        adapter = _BUILT.setdefault(model, adapter)
    return adapter
