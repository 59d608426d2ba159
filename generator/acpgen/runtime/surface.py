"""What a package shows: its front door, and the runtime's objects as its public
modules' own.

Support code: it knows no method of the protocol. The generated ``__init__`` lists what
it offers (``Agent``, ``spawn_agent``, ``models``...) in a :class:`FrontDoor`, each name
imported when first used: importing the package stays as cheap as importing pydantic,
and a module that needs an optional extra (``remote``) is imported only by the code
that uses it. A public module that offers a class or a function of the runtime
(``remote.AcpApp``, ``connection.Connection``) shows it as its own (:func:`present`), so
that ``help()``, ``repr()`` and tracebacks name it there, not in the private module that
defines it.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["FrontDoor", "present"]


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


def present(module: str, *objects: type[Any] | Callable[..., Any]) -> None:
    """Show ``objects``, classes and functions of the runtime, as the public
    ``module``'s own (their ``__module__``; their ``__qualname__`` is kept).

    A class's own annotations, which name what its defining module imported, are read
    there first (where they can be), so that ``typing.get_type_hints`` still reads
    them once the class names another module.
    """
    for each in objects:
        own = inspect.get_annotations(each) if isinstance(each, type) else None
        if own and any(isinstance(value, str) for value in own.values()):
            try:
                hints = typing.get_type_hints(each, include_extras=True)
            except NameError:  # a name imported for type checkers only: left as it is
                hints = {}
            if hints:
                each.__annotations__ = {key: hints.get(key, own[key]) for key in own}
        each.__module__ = module
