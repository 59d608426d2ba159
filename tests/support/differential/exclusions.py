"""The checked list of known disagreements with the SDK (``exclusions.json`` beside this module).

Each entry names a defect of the TypeScript SDK's reader, why we read otherwise, and a ``match``:
the findings it covers. A finding is excluded when every key of an entry's ``match`` fits it:

``outcome``, ``kind``, ``build``, ``format``   a list of the values allowed
``type``, ``site``, ``ours``, ``sdk``,         a list of glob patterns (``fnmatch``), e.g. ``"*Invalid URL*"``
``difference``
``unsafe_integer``, ``schema_valid``,          true or false
``sdk_subset``, ``sdk_drops_unknown``

The list cannot rot: an entry that matches no finding of a run fails the test, and so does a
finding that no entry matches. A ``crash`` is never excluded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from tests.support.differential.compare import OUTCOMES, Finding
from tests.support.mutations import KINDS

FILE = Path(__file__).with_name("exclusions.json")
LISTS = ("outcome", "kind", "build", "format")
GLOBS = ("type", "site", "ours", "sdk", "difference")
FLAGS = ("unsafe_integer", "schema_valid", "sdk_subset", "sdk_drops_unknown")


@dataclass(frozen=True, slots=True)
class Exclusion:
    id: str
    match: dict[str, Any]
    reason: str
    sdk_defect: str

    def covers(self, finding: Finding) -> bool:
        features = _features(finding)
        for key, wanted in self.match.items():
            if key in LISTS and features[key] not in wanted:
                return False
            if key in GLOBS and not any(fnmatchcase(features[key], pattern) for pattern in wanted):
                return False
            if key in FLAGS and features[key] is not wanted:
                return False
        return finding.outcome != "crash"


def load(path: Path = FILE) -> list[Exclusion]:
    """The exclusions, checked for shape: unknown keys or values are errors, not silent no-ops."""
    entries = json.loads(path.read_text(encoding="utf-8"))["exclusions"]
    found = []
    for entry in entries:
        assert set(entry) == {"id", "match", "reason", "sdk_defect"}, f"exclusion {entry.get('id')}: keys {set(entry)}"
        assert entry["reason"].strip() and entry["sdk_defect"].strip(), f"exclusion {entry['id']}: say why"
        match = entry["match"]
        assert match and set(match) <= {*LISTS, *GLOBS, *FLAGS}, f"exclusion {entry['id']}: match keys {set(match)}"
        assert set(match.get("outcome", [])) <= set(OUTCOMES) - {"crash"}, f"exclusion {entry['id']}: outcome"
        assert set(match.get("kind", [])) <= {"valid", "pinned", *KINDS}, f"exclusion {entry['id']}: kind"
        found.append(Exclusion(entry["id"], match, entry["reason"], entry["sdk_defect"]))
    assert len({e.id for e in found}) == len(found), "exclusion ids must be unique"
    return found


def _features(finding: Finding) -> dict[str, Any]:
    case = finding.case
    return {
        "outcome": finding.outcome,
        "kind": case.kind,
        "build": case.build,
        "format": case.format,
        "type": case.type_name,
        "site": case.site,
        "ours": finding.ours,
        "sdk": finding.sdk,
        "unsafe_integer": finding.unsafe_integer,
        "schema_valid": case.schema_valid,
        "sdk_subset": finding.sdk_subset,
        "sdk_drops_unknown": finding.sdk_drops_unknown,
        "difference": finding.difference,
    }
