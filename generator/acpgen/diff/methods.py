"""Methods compared by side, wire name and kind: added, removed, renamed, moved to another
side, changed kind, or given params or results of another shape. One side may handle a request
and a notification of the same name (``proxy/successor``): both are compared."""

from __future__ import annotations

from acpgen.diff.findings import Recorder
from acpgen.diff.relations import Relation, relate
from acpgen.diff.snapshot import BOTH, CALLERS, Method, Snapshot, Writer

MethodKey = tuple[str, str, str]


def _method_stability(snapshot: Snapshot, method: Method) -> str:
    item = snapshot.items.get(f"method:{method.side}:{method.wire}")
    return item.stability if item is not None else "stable"


def _callers(method: Method) -> frozenset[Writer]:
    return CALLERS.get(method.side, BOTH)


def _key(method: Method) -> MethodKey:
    return method.side, method.wire, method.kind


def _kind_changes(old: dict[MethodKey, Method], new: dict[MethodKey, Method]) -> list[tuple[Method, Method]]:
    """Methods of one side and name that changed kind (a request became a notification)."""
    pairs = []
    for key in sorted(old.keys() - new.keys()):
        side, wire, _ = key
        others = [k for k in sorted(new.keys() - old.keys()) if k[:2] == (side, wire)]
        if others and not any(k[:2] == (side, wire) for k in old.keys() & new.keys()):
            pairs.append((old[key], new[others[0]]))
    return pairs


def compare_methods(diff: Recorder) -> None:
    old, new = dict(diff.old.methods), dict(diff.new.methods)
    for before, after in _kind_changes(old, new):
        _compare_method_pair(diff, before, after)
        del old[_key(before)], new[_key(after)]
    added = {k: new[k] for k in sorted(new.keys() - old.keys())}
    for key in sorted(old.keys() - new.keys()):
        target = _successor(diff, old[key], added)
        if target is None:
            _added_or_removed(diff, old[key], "removed")
        else:
            added.pop(_key(target))
    for method in added.values():
        _added_or_removed(diff, method, "added")
    for key in sorted(old.keys() & new.keys()):
        _compare_method_pair(diff, old[key], new[key])


def _successor(diff: Recorder, method: Method, added: dict[MethodKey, Method]) -> Method | None:
    """The added method that replaces a removed one, reported as such: the same wire name on
    another side (moved), or the same params and result under another name (renamed)."""
    moved = [m for m in added.values() if m.wire == method.wire]
    if moved:
        target = moved[0]
        diff.add(
            "method-side-changed",
            f"method:{target.side}:{target.wire}",
            f"{method.wire} is now handled by the {target.side} side, not the {method.side} side",
            stability=_method_stability(diff.new, target),
            old=method.side,
            new=target.side,
        )
        _compare_method_pair(diff, method, target)
        return target
    renames = diff.ctx.renames
    same_types = [
        m
        for m in added.values()
        if (m.side, m.kind) == (method.side, method.kind)
        and renames.get(method.params, method.params) == m.params
        and (method.result is None or renames.get(method.result, method.result) == m.result)
    ]
    if len(same_types) != 1:
        return None
    target = same_types[0]
    diff.add(
        "method-renamed",
        f"method:{target.side}:{target.wire}",
        f"{method.wire} is now called {target.wire} (same params and result)",
        stability=_method_stability(diff.new, target),
        writers=_callers(target),
        old=method.wire,
        new=target.wire,
    )
    return target


def _added_or_removed(diff: Recorder, method: Method, verb: str) -> None:
    side = diff.new if verb == "added" else diff.old
    diff.add(
        f"method-{verb}",
        f"method:{method.side}:{method.wire}",
        f"{method.wire} ({method.kind}, handled by the {method.side} side) was {verb}",
        stability=_method_stability(side, method),
        writers=_callers(method) if verb == "removed" else (),
    )


def _compare_method_pair(diff: Recorder, before: Method, after: Method) -> None:
    item = f"method:{after.side}:{after.wire}"
    stability = _method_stability(diff.new, after)
    if before.python_name != after.python_name:
        diff.add(
            "python-method-renamed",
            item,
            f"the sender and interface method of {after.wire} is now {after.python_name} (was {before.python_name})",
            stability=stability,
            old=before.python_name,
            new=after.python_name,
        )
    if before.kind != after.kind:
        diff.add(
            "method-kind-changed",
            item,
            f"{after.wire} was a {before.kind} and is now a {after.kind}",
            stability=stability,
            writers=_callers(after),
            old=before.kind,
            new=after.kind,
        )
        return
    for rule_id, was, now in (
        ("method-params-changed", before.params, after.params),
        ("method-result-changed", before.result, after.result),
    ):
        if was is None or now is None or diff.ctx.renames.get(was, was) == now:
            continue
        relation = relate({"ref": was}, {"ref": now}, diff.ctx)
        if relation in (Relation.SAME, Relation.SWAPPED):
            continue
        diff.add(
            rule_id,
            item,
            f"{after.wire} now uses {now} instead of {was}, of a different shape",
            stability=stability,
            writers=_callers(after),
            old=was,
            new=now,
        )
