"""Every name the generator gives is decided here, once.

Class names are PascalCase, attribute and method names snake_case; Python keywords and
names that would shadow builtins or pydantic's own attributes get a trailing underscore.
No name is ever derived from a position in a list, so an upstream reordering cannot
rename anything.

Names are ASCII: a letter with an accent loses it (``Ärger`` -> ``Arger``), and any other
letter or digit is spelled by its code point (``日本`` -> ``U65e5U672c``); other characters
separate words. A text with no letter or digit gives no name (:class:`NoName`).
"""

from __future__ import annotations

import builtins
import keyword
import re
import unicodedata

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")
_RESERVED_ATTRS = frozenset(dir(builtins)) | frozenset(
    {"model_config", "model_fields", "schema", "json", "dict", "copy", "validate", "construct"}
)


class NoName(ValueError):
    """The text has no letter or digit to make a name from."""


def words(text: str) -> list[str]:
    """Split ``camelCase``, ``snake_case``, ``kebab-case``, ``a/b`` and ``Title Case`` into lower words."""
    return [w.lower() for w in _WORD.findall(_ascii(text))]


def _ascii(text: str) -> str:
    """``text`` in ASCII letters and digits: accents dropped, other letters and digits spelled ``u<hex>``."""
    if text.isascii():
        return text
    spelled = []
    for char in unicodedata.normalize("NFKD", text):
        if char.isascii():
            spelled.append(char)
        elif not unicodedata.combining(char):
            spelled.append(f" u{ord(char):x} " if char.isalnum() else " ")
    return "".join(spelled)


def class_name(*parts: str) -> str:
    """PascalCase class name built from the words of every part, e.g. ``("tool_call", "SessionUpdate")``."""
    joined = "".join(w[:1].upper() + w[1:] for part in parts for w in words(part))
    if not joined:
        msg = f"no class name can be made from {parts!r}: it has no letter or digit"
        raise NoName(msg)
    return joined if joined[0].isalpha() else "T" + joined


def snake(text: str) -> str:
    """snake_case attribute name for a wire name: ``sessionUpdate`` -> ``session_update``, ``_meta`` -> ``meta``."""
    name = "_".join(words(text)) or "field"
    if name[0].isdigit():
        name = "n_" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in _RESERVED_ATTRS:
        name += "_"
    return name


# Names the models module defines or imports besides the schema's types (typing, pydantic, the
# package's ``_support`` rules, the root model), and Python's capitalised keywords: a schema type
# with one of these names gets the suffix ``Type``.
_MODULE_NAMES = frozenset(
    {
        *("Annotated", "Any", "Literal", "TypeAliasType", "Optional", "Union"),
        *("BaseModel", "ConfigDict", "Discriminator", "Field", "RootModel", "Tag"),
        *("DefaultOnError", "DefaultOnNull", "Integral", "KeepUnrecognised", "NotNull", "OmitNone"),
        *("SkipInvalidItems", "StrictJson", "TagRouter", "WireModel", "ByMethod", "OrDefault"),
        *("ByEnvelope",),
        *("AcpMessage", "False", "None", "True"),
    }
)
_KEPT = re.compile(r"[A-Z][A-Za-z0-9]*")
"""A definition name kept as its class name: PascalCase ASCII letters and digits (what
datamodel-code-generator also keeps as it is)."""


def type_class_name(def_name: str) -> str:
    """Class name of a ``$defs`` entry: upstream's own name when it is a PascalCase ASCII identifier.

    Raises :class:`NoName` for a name with no letter or digit."""
    name = def_name if _KEPT.fullmatch(def_name) else class_name(def_name)
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
# Attributes of the generated interfaces and senders besides the protocol's methods (the runtime's
# ``Sender``, ``on_connect`` and the peer it keeps, the extension hooks): a method never takes one.
_TAKEN_METHOD_NAMES = frozenset(
    {"advertised", "on_connect", "ext_method", "ext_notification", "agent", "client", "proxy", "conductor"}
)


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
    name = snake(stem) if stem and action <= set(words(stem)) else snake("_".join(segments))
    return name + "_" if name in _TAKEN_METHOD_NAMES else name


_TAKEN_CONSTANTS = frozenset({"METHODS"})
"""Names of the methods module besides the method constants."""


def constant_name(wire: str) -> str:
    """UPPER_SNAKE constant for a wire method name: ``session/new`` -> ``SESSION_NEW``."""
    name = "_".join(w for s in wire.split("/") for w in words(s)).upper() or "METHOD"
    if name[0].isdigit() or name in _TAKEN_CONSTANTS:
        name = "METHOD_" + name
    return name


def code_constant(title: str) -> str:
    """UPPER_SNAKE constant for an error code's title: ``Method not found`` -> ``METHOD_NOT_FOUND``."""
    name = "_".join(words(title)).upper()
    return "CODE_" + name if name[:1].isdigit() else name


def capability_accessor(path: str) -> str:
    """The ``supports_...`` function of a capability, from its wire path:
    ``agentCapabilities.sessionCapabilities.resume`` -> ``supports_agent_session_resume``
    (``...Capabilities`` segments read better without the suffix)."""
    return "supports_" + "_".join(snake(segment.removesuffix("Capabilities") or segment) for segment in path.split("."))


def builder_name(class_name: str) -> str:
    """The function of the ``builders`` module that makes a model class's instance:
    ``TextContentBlock`` -> ``text_content_block``."""
    return snake(class_name)


def slot_name(key: str, snake_kind: str) -> str:
    """The name of a place in a session's state: after the id type of the things it holds
    (``ToolCallId`` -> ``tool_calls``), else after the update kind that fills it
    (``usage_update`` -> ``usage``, ``agent_message_chunk`` -> ``agent_message``)."""
    if key:
        base = snake(key).removesuffix("_id")
        return base if base.endswith("s") else base + "s"
    return snake_kind.removesuffix("_update").removesuffix("_chunk") or snake_kind


_STATE_NAMES = frozenset(
    {"wire", "new", "session_id", "update", "call", "calls", "unknown", "timeline", "to_json", "from_trace"}
    | {"from_lines", "RULES", "KINDS", "TAG", "NOTIFICATION", "SESSION", "UPDATE", "METHODS"}
)
"""Names of ``SessionState`` that a slot's property may not take."""


def state_property(slot: str) -> str:
    """The ``SessionState`` property that reads a slot: its name, with a trailing ``_`` where that is
    a name ``SessionState`` has already or a Python keyword."""
    return slot + "_" if slot in _STATE_NAMES or keyword.iskeyword(slot) else slot


def tracker_class_name(slot: str) -> str:
    """The tracker class of a slot's things: ``tool_calls`` -> ``ToolCallTracker``."""
    return class_name(slot.removesuffix("s"), "tracker")


MESSAGE_ROOT = "AcpMessage"
"""The class of the schema's root: any message of the protocol."""


def message_class_name(title: str, kind: str) -> str:
    """The class of a branch of the schema's root, from its title: what one side writes
    (``outgoing``: ``Agent`` -> ``AgentOutgoingMessage``), or a protocol-level envelope
    (``ProtocolLevel`` -> ``ProtocolLevelMessage``)."""
    return type_class_name(f"{title}OutgoingMessage" if kind == "outgoing" else f"{title}Message")
