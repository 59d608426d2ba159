"""Runtime objects shown as the public modules' own.

Support code: it knows no method of the protocol. A public module of a package that
offers a class or a function of the runtime (``remote.AcpApp``,
``connection.Connection``) shows it as its own (:func:`present`), so that ``help()``,
``repr()`` and tracebacks name it there, not in the private module that defines it.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

__all__ = ["present"]


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
