"""For agents: report a thing's whole state as it changes (a tool call), send only what
changed.

Schema-independent: ``session_state`` renders one tracker per thing that a creating
update kind makes and a patching kind changes (``tool_call`` / ``tool_call_update``),
with those two kinds' models.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from .fold import as_mapping

C = TypeVar("C", bound=BaseModel)
U = TypeVar("U", bound=BaseModel)


class Tracker(Generic[C, U]):
    """Remembers each thing's last reported state (by its id) and turns a new state into
    the update to send: the creating kind the first time, then a patch with the members
    that changed (a member that was dropped is sent as null where null clears it;
    elsewhere a patch cannot clear it, and it is left out). Of an open map (``_meta``),
    which the fold merges, only the members that changed are sent."""

    def __init__(
        self,
        create: type[C],
        patch: type[U],
        *,
        key: str,
        tag: str | None,
        kinds: tuple[str, str],
        clears: frozenset[str],
        merges: frozenset[str] = frozenset(),
    ) -> None:
        self._create, self._patch = create, patch
        self._key, self._tag, self._kinds, self._clears = key, tag, kinds, clears
        self._merges = merges
        self._known: dict[str, dict[str, Any]] = {}

    def report(self, thing: C) -> C | U | None:
        """The update that brings the client from the last reported state of ``thing``
        to this one (``thing`` itself the first time); ``None`` when nothing changed."""
        wire = {
            k: v for k, v in thing.model_dump(mode="json").items() if k != self._tag
        }
        key = wire.get(self._key)
        if not isinstance(key, str):
            raise TypeError(f"the thing has no {self._key}")
        before = self._known.get(key)
        self._known[key] = wire
        if before is None:
            return thing
        changes = _changes(before, wire, self._clears, self._merges)
        if not changes:
            return None
        message: dict[str, Any] = {self._key: key, **changes}
        if self._tag is not None:
            message[self._tag] = self._kinds[1]
        return self._patch.model_validate(message)

    def known(self, key: str) -> Mapping[str, Any] | None:
        """The last reported state of the thing ``key`` (its wire form), if any."""
        return self._known.get(key)

    def forget(self, key: str) -> None:
        """Forget the thing ``key`` (a later report of it creates it again)."""
        self._known.pop(key, None)


def _changes(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    clears: frozenset[str],
    merges: frozenset[str],
) -> dict[str, Any]:
    changes = {
        name: value for name, value in after.items() if before.get(name) != value
    }
    for name in merges & changes.keys():
        old, new = as_mapping(before.get(name)), as_mapping(changes[name])
        if old is not None and new is not None:
            changes[name] = {k: v for k, v in new.items() if old.get(k) != v}
            if not changes[name]:
                del changes[name]  # only members dropped: a merge cannot say so
    changes.update(
        {name: None for name in before if name not in after and name in clears}
    )
    return changes
