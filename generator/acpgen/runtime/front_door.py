"""A package's front door: names it offers from its modules, each imported when first
used.

Support code: it knows no method of the protocol. The generated ``__init__`` lists what
it offers (``Agent``, ``spawn_agent``, ``models``...); importing the package stays as
cheap as importing pydantic, and a module that needs an optional extra (``remote``) is
imported only by the code that uses it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = ["FrontDoor"]


class FrontDoor:
    """The names a package offers: ``name -> (module, attribute)``, ``attribute`` None
    for the module itself."""

    def __init__(
        self, package: str, names: Mapping[str, tuple[str, str | None]]
    ) -> None:
        self._package = package
        self._names = names

    def get(self, name: str, namespace: MutableMapping[str, Any]) -> Any:
        """The value of ``name``, imported now and kept in the package's ``namespace``;
        AttributeError for a name the package does not offer."""
        try:
            module, attribute = self._names[name]
        except KeyError:
            message = f"module {self._package!r} has no attribute {name!r}"
            raise AttributeError(message) from None
        value: Any = importlib.import_module(module, self._package)
        if attribute is not None:
            value = getattr(value, attribute)
        namespace[name] = value
        return value

    def names(self, namespace: Mapping[str, Any]) -> list[str]:
        """What ``dir()`` of the package lists: what it holds and what it offers."""
        return sorted({*namespace, *self._names})
