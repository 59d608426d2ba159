"""Every name the generator gives is decided here, once.

Class names are PascalCase, attribute and method names snake_case; Python keywords and
names that would shadow builtins or pydantic's own attributes get a trailing underscore.
No name is ever derived from a position in a list, so an upstream reordering cannot
rename anything.
"""

from __future__ import annotations

import builtins
import keyword
import re

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")
_RESERVED_ATTRS = frozenset(dir(builtins)) | frozenset(
    {"model_config", "model_fields", "schema", "json", "dict", "copy", "validate", "construct"}
)


def words(text: str) -> list[str]:
    """Split ``camelCase``, ``snake_case``, ``kebab-case``, ``a/b`` and ``Title Case`` into lower words."""
    return [w.lower() for w in _WORD.findall(text)]


def class_name(*parts: str) -> str:
    """PascalCase class name built from the words of every part, e.g. ``("tool_call", "SessionUpdate")``."""
    joined = "".join(w[:1].upper() + w[1:] for part in parts for w in words(part))
    if not joined:
        msg = f"no class name can be made from {parts!r}"
        raise ValueError(msg)
    return joined if joined[0].isalpha() else "T" + joined


def snake(text: str) -> str:
    """snake_case attribute name for a wire name: ``sessionUpdate`` -> ``session_update``, ``_meta`` -> ``meta``."""
    name = "_".join(words(text)) or "field"
    if name[0].isdigit():
        name = "n_" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in _RESERVED_ATTRS:
        name += "_"
    return name


# Names the models module imports; a schema type must not take one of them.
_MODULE_NAMES = frozenset(
    {"Annotated", "Any", "BaseModel", "ConfigDict", "Discriminator", "Field", "Literal", "Tag", "TypeAliasType"}
)


def type_class_name(def_name: str) -> str:
    """Class name of a ``$defs`` entry: upstream's own name when it is a usable identifier."""
    if def_name.isidentifier() and not keyword.iskeyword(def_name) and def_name[:1].isupper():
        name = def_name
    else:
        name = class_name(def_name)
    return name + "Type" if name in _MODULE_NAMES else name


def variant_class_name(key: str, union_class: str, taken: frozenset[str] = frozenset()) -> str:
    """Class name of a union branch that needs one of its own, from its key and the union's name.

    ``("tool_call", "SessionUpdate")`` -> ``ToolCallSessionUpdate``; when a schema type already
    has that name (``RunningStateUpdate`` is the payload of ``StateUpdate[running]``), the
    union's name comes first instead: ``StateUpdateRunning``.
    """
    first = type_class_name(class_name(key, union_class))
    return first if first not in taken else type_class_name(class_name(union_class, key))


_ROLE_SUFFIXES = ("Request", "Notification")


def method_name(wire: str, params_type: str) -> str:
    """Python method name of a wire method, from its params type: ``NewSessionRequest`` -> ``new_session``.

    The params type names the action as the official SDKs call it (``request_permission``,
    ``wait_for_terminal_exit``). Where it does not say what the method does (every word of the
    wire name's last segment must appear), the wire segments are joined instead:
    ``session/update`` (params ``SessionNotification``) -> ``session_update``.
    """
    stem = params_type
    for suffix in _ROLE_SUFFIXES:
        if stem.endswith(suffix) and stem != suffix:
            stem = stem.removesuffix(suffix)
            break
    segments = [s for s in wire.split("/") if s and s != "$"]
    action = set(words(segments[-1])) if segments else set()
    if stem and action <= set(words(stem)):
        return snake(stem)
    return snake("_".join(segments))


def constant_name(wire: str) -> str:
    """UPPER_SNAKE constant for a wire method name: ``session/new`` -> ``SESSION_NEW``."""
    return "_".join(w for s in wire.split("/") for w in words(s)).upper() or "METHOD"


def code_constant(title: str) -> str:
    """UPPER_SNAKE constant for an error code's title: ``Method not found`` -> ``METHOD_NOT_FOUND``."""
    return "_".join(words(title)).upper()
