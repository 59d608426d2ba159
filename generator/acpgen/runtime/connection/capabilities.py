"""Capability checks: whether a peer advertised a capability, and which rules an
outgoing message breaks.

Support code: it knows no method of the protocol. The generated ``capabilities`` module
holds the schema's capabilities and the curated rules (the rule table checked against
the schema at generation) and reads them with a :class:`RuleBook`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from pydantic import BaseModel

__all__ = ["Capability", "CapabilityError", "Rule", "RuleBook", "Side", "Violation"]

Side = Literal["agent", "client"]


@dataclass(frozen=True, slots=True)
class Capability:
    """A capability: its wire path, who advertises it, how presence is judged, its
    attributes from the root."""

    path: str
    side: Side
    presence: Literal["true", "present"]
    attrs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Rule:
    """A method, field, union variant or enum value that needs a capability of the
    peer."""

    kind: Literal["method", "field", "variant", "value"]
    subject: str
    capability: Capability
    classes: tuple[type[BaseModel], ...]
    attr: str | None
    value: str | None
    message: str


@dataclass(frozen=True, slots=True)
class Violation:
    """A rule that an outgoing message breaks."""

    rule: Rule
    message: str


class CapabilityError(Exception):
    """An outgoing message uses what the peer did not advertise."""

    def __init__(self, found: list[Violation]) -> None:
        super().__init__("; ".join(v.message for v in found))
        self.violations = found


class RuleBook:
    """The capabilities and rules of one package, indexed for the checks a sender
    makes."""

    def __init__(
        self, capabilities: Mapping[str, Capability], rules: tuple[Rule, ...]
    ) -> None:
        self._capabilities = capabilities
        self._by_method: dict[tuple[Side, str], tuple[Rule, ...]] = {}
        self._by_class: dict[Side, dict[type[BaseModel], tuple[Rule, ...]]] = {
            "agent": {},
            "client": {},
        }
        self._holds: dict[tuple[type, Side], bool] = {}
        self._fields: dict[tuple[type, Side], tuple[str, ...] | None] = {}
        self._paths_of: dict[Side, dict[type, tuple[str, ...] | None]] = {
            "agent": dict(_PLAIN),
            "client": dict(_PLAIN),
        }
        """:meth:`_paths` of the model classes met so far, by peer (bounded by the
        package's classes: only model classes are recorded), and None for the plain
        JSON values, which hold nothing."""
        for rule in rules:
            if rule.kind == "method":
                key = (rule.capability.side, rule.subject)
                self._by_method[key] = (*self._by_method.get(key, ()), rule)
            for cls in rule.classes:
                table = self._by_class[rule.capability.side]
                table[cls] = (*table.get(cls, ()), rule)

    def supports(self, advertised: BaseModel | None, path: str) -> bool:
        """Whether ``advertised`` (the peer's ``AgentCapabilities`` or
        ``ClientCapabilities``) has capability ``path``."""
        capability = self._capabilities[path]
        value: Any = advertised
        for attr in capability.attrs:
            value = getattr(value, attr, None)
            if value is None:
                return False
        return value is True if capability.presence == "true" else value is not None

    def violations(
        self, peer: Side, advertised: BaseModel | None, method: str, payload: Any
    ) -> list[Violation]:
        """Every rule that sending ``method`` with ``payload`` to ``peer`` breaks, given
        what it advertised.

        ``payload`` is the params (or result) model; rules for fields, variants and enum
        values look at every model inside it.
        """
        rules = self._by_method.get((peer, method))
        found = (
            [r for r in rules if not self.supports(advertised, r.capability.path)]
            if rules
            else []
        )
        paths_of = self._paths_of[peer]
        known = paths_of.get(payload.__class__, _UNKNOWN)  # (models, plain values)
        if (
            self._by_class[peer]
            and known is not None
            and (known is not _UNKNOWN or isinstance(payload, BaseModel))
        ):
            found += self._broken_inside(peer, advertised, payload)
        if not found:
            return []
        unique = list(dict.fromkeys(found))
        return [Violation(rule, rule.message) for rule in unique]

    def _broken_inside(
        self, peer: Side, advertised: BaseModel | None, payload: Any
    ) -> list[Rule]:
        """The rules for ``peer`` that the models inside ``payload`` (itself included)
        break, in the order they are written, following only the fields that can hold
        a gated model."""
        by_class, paths_of = self._by_class[peer], self._paths_of[peer]
        found: list[Rule] = []
        stack: list[Any] = [payload]
        pop, push, put = stack.pop, stack.extend, stack.append
        while stack:
            value = pop()
            kind: type[Any] = value.__class__  # (type(value), typed)
            paths = paths_of.get(kind, _UNKNOWN)
            if paths is None:  # a model holding no gated model, a string, a number
                continue
            if paths is _UNKNOWN:
                if kind is list or kind is tuple or isinstance(value, (list, tuple)):
                    push(reversed(cast("list[Any]", value)))
                    continue
                if kind is dict or isinstance(value, dict):
                    push(reversed(cast("dict[Any, Any]", value).values()))
                    continue
                if not isinstance(value, BaseModel):
                    continue
                paths = self._paths(kind, peer)
                if paths is None:
                    continue
            gated = by_class.get(kind)
            if gated:
                for rule in gated:
                    if _uses(rule, value) and not self.supports(
                        advertised, rule.capability.path
                    ):
                        found.append(rule)
            if paths:
                held = value.__dict__
                for name in paths:
                    if name in held:
                        item = held[name]
                        item_kind: type[Any] = item.__class__
                        if item_kind is list:  # its items, in their place
                            push(reversed(item))
                        elif paths_of.get(item_kind, _UNKNOWN) is not None:
                            put(item)
        return found

    def require(
        self, peer: Side, advertised: BaseModel | None, method: str, payload: Any
    ) -> None:
        """Raise :class:`CapabilityError` listing every violation, if there is one.

        A payload seen at once to hold no model a rule for ``peer`` gates (itself
        included) is not walked: a model of a class met before, whose fields that could
        hold one hold only values of classes that cannot (the common prompt, text blocks
        in a list; a ``session/update`` of a message chunk).
        """
        if (peer, method) not in self._by_method:
            paths_of = self._paths_of[peer]
            kind: type[Any] = payload.__class__
            paths = paths_of.get(kind, _UNKNOWN)
            if paths is None:
                return
            if paths is not _UNKNOWN and kind not in self._by_class[peer]:
                held: dict[str, Any] = payload.__dict__
                for name in paths:  # (each break: something to walk)
                    item: Any = held.get(name)
                    item_kind: type[Any] = item.__class__
                    if item_kind is list:
                        elements: list[Any] = item
                        for element in elements:
                            element_kind: type[Any] = element.__class__
                            if paths_of.get(element_kind, _UNKNOWN) is not None:
                                break
                        else:
                            continue  # the list's items hold nothing gated
                        break
                    if paths_of.get(item_kind, _UNKNOWN) is not None:
                        break
                else:
                    return  # nothing gated anywhere in it
        found = self.violations(peer, advertised, method, payload)
        if found:
            raise CapabilityError(found)

    def _paths(self, model: type, peer: Side) -> tuple[str, ...] | None:
        """The fields of ``model`` whose type can hold a model that a rule for ``peer``
        gates, last first (the order a stack walks them in the written order); None
        when a value of ``model`` can hold none, itself included."""
        key = (model, peer)
        try:
            return self._fields[key]
        except KeyError:
            pass
        paths: tuple[str, ...] | None = None
        if self._may_hold(model, peer):
            gated = self._by_class[peer].keys()
            fields = getattr(model, "model_fields", {})
            paths = tuple(
                name
                for name, field in reversed(fields.items())
                if _reaches(field.annotation, gated)
            )
        self._fields[key] = paths
        self._paths_of[peer][model] = paths
        return paths

    def _may_hold(self, model: type, peer: Side) -> bool:
        """Whether a value of ``model`` can hold a model that a rule for ``peer`` gates
        (its field types, followed through unions, lists and other models): when not,
        nothing is walked."""
        known = self._holds.get((model, peer))
        if known is None:
            known = self._holds[(model, peer)] = _reaches(
                model, self._by_class[peer].keys()
            )
        return known


_UNKNOWN: Any = object()
_PLAIN: dict[type, None] = dict.fromkeys((str, int, float, bool, type(None)))


def _uses(rule: Rule, obj: BaseModel) -> bool:
    if rule.kind == "variant":
        return True
    value = getattr(obj, rule.attr or "", None)
    if rule.kind == "value":
        return bool(value == rule.value)
    return value is not None and value != [] and value != {}


def _reaches(model: type, gated: Any) -> bool:
    seen: set[Any] = set()
    stack: list[Any] = [model]
    while stack:
        kind = stack.pop()
        if kind in seen:
            continue
        seen.add(kind)
        if kind in gated:
            return True
        stack.extend(get_args(kind))
        value = getattr(kind, "__value__", None)  # a type alias
        if value is not None:
            stack.append(value)
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            stack.extend(field.annotation for field in kind.model_fields.values())
    return False
