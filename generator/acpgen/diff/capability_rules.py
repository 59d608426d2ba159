"""The capability rule tables of two revisions compared by subject (when both have one)."""

from __future__ import annotations

from acpgen.diff.findings import PEER, Recorder, item_label
from acpgen.diff.snapshot import BOTH, Snapshot


def compare_capability_rules(diff: Recorder) -> None:
    old, new = diff.old.rules, diff.new.rules
    if old is None or new is None:
        return
    for subject in sorted(old.keys() | new.keys()):
        before, after = old.get(subject), new.get(subject)
        stability = _subject_stability(diff.new if after is not None else diff.old, subject)
        if before is None and after is not None:
            diff.add(
                "capability-rule-added",
                subject,
                f"{item_label(subject)} now needs {after['needs']} (advertised by the {after['side']})",
                stability=stability,
                writers=[PEER[after["side"]]] if after["side"] in PEER else BOTH,
                new=dict(after),
            )
        elif after is None and before is not None:
            diff.add(
                "capability-rule-removed",
                subject,
                f"{item_label(subject)} no longer needs {before['needs']}",
                stability=stability,
                old=dict(before),
            )
        elif before is not None and after is not None and dict(before) != dict(after):
            diff.add(
                "capability-rule-changed",
                subject,
                f"{item_label(subject)} needed {before['needs']} ({before.get('presence')}) and now needs "
                f"{after['needs']} ({after.get('presence')})",
                stability=stability,
                writers=[PEER[after["side"]]] if after["side"] in PEER else BOTH,
                old=dict(before),
                new=dict(after),
            )


def _subject_stability(snapshot: Snapshot, subject: str) -> str:
    kind, name = subject.split(":", 1)
    if kind == "method":
        for item in snapshot.items.values():
            if item.key.startswith("method:") and item.key.split(":", 2)[2] == name:
                return item.stability
        return "stable"
    found = snapshot.items.get(subject)
    return found.stability if found is not None else "stable"
