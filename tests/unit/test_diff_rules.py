"""The spec diff on minimal fixture pairs: each change gives exactly the expected rule ids,
and representation churn that leaves the wire unchanged gives none."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from acpgen.diff.catalogue import LEVELS, RULES
from acpgen.diff.compare import Finding, compare
from acpgen.diff.snapshot import snapshot

Defs = dict[str, Any]


def _base() -> Defs:
    """A tiny protocol: session/new (agent), session/update (client, notification), a tagged
    union, an enum, an integer with a format."""
    return {
        "NewSessionRequest": {
            "type": "object",
            "x-method": "session/new",
            "x-side": "agent",
            "properties": {
                "cwd": {"type": "string"},
                "limit": {"type": "integer", "format": "uint16", "minimum": 0},
                "sessionId": {"$ref": "#/$defs/SessionId"},
                "flag": {"type": "boolean", "default": False},
            },
            "required": ["cwd"],
        },
        "NewSessionResponse": {
            "type": "object",
            "x-method": "session/new",
            "x-side": "agent",
            "properties": {"sessionId": {"$ref": "#/$defs/SessionId"}, "stop": {"$ref": "#/$defs/StopReason"}},
            "required": ["sessionId"],
        },
        "SessionNotification": {
            "type": "object",
            "x-method": "session/update",
            "x-side": "client",
            "properties": {"update": {"$ref": "#/$defs/SessionUpdate"}},
            "required": ["update"],
        },
        "SessionUpdate": {
            "oneOf": [
                {
                    "allOf": [{"$ref": "#/$defs/Plan"}],
                    "properties": {"kind": {"const": "plan", "type": "string"}},
                    "required": ["kind"],
                    "type": "object",
                },
                {
                    "properties": {"kind": {"const": "message", "type": "string"}, "text": {"type": "string"}},
                    "required": ["kind", "text"],
                    "type": "object",
                },
            ]
        },
        "Plan": {"type": "object", "properties": {"entries": {"type": "array", "items": {"type": "string"}}}},
        "SessionId": {"type": "string"},
        "Identifier": {"type": "string"},
        "StopReason": {"oneOf": [{"const": "end_turn", "type": "string"}, {"const": "cancelled", "type": "string"}]},
    }


def _doc(defs: Defs) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def _rules_of(old: Defs, new: Defs, **kw: Any) -> set[str]:
    return {f.rule for f in _diff(old, new, **kw)}


def _diff(
    old: Defs,
    new: Defs,
    old_unstable: Defs | None = None,
    new_unstable: Defs | None = None,
    old_rules: Any = None,
    new_rules: Any = None,
) -> list[Finding]:
    a = snapshot("old", _doc(old), _doc(old_unstable or old), old_rules)
    b = snapshot("new", _doc(new), _doc(new_unstable or new), new_rules)
    return compare(a, b)


def _changed(edit: Callable[[Defs], object]) -> Defs:
    defs = copy.deepcopy(_base())
    edit(defs)
    return defs


def _add_method(d: Defs) -> None:
    d["CloseRequest"] = {"type": "object", "x-method": "session/close", "x-side": "agent", "properties": {}}
    d["CloseResponse"] = {"type": "object", "x-method": "session/close", "x-side": "agent", "properties": {}}


def _rename_method(d: Defs) -> None:
    for name in ("NewSessionRequest", "NewSessionResponse"):
        d[name]["x-method"] = "session/create"


def _move_method(d: Defs) -> None:
    for name in ("NewSessionRequest", "NewSessionResponse"):
        d[name]["x-side"] = "client"


def _rename_type(d: Defs) -> None:
    d["SessionPlan"] = d.pop("Plan")
    d["SessionUpdate"]["oneOf"][0]["allOf"] = [{"$ref": "#/$defs/SessionPlan"}]


def _props(d: Defs, name: str = "NewSessionRequest") -> dict[str, Any]:
    props: dict[str, Any] = d[name]["properties"]
    return props


def _require(d: Defs, prop: str) -> None:
    d["NewSessionRequest"]["required"].append(prop)


def _add_required(d: Defs) -> None:
    _props(d)["mode"] = {"type": "string"}
    _require(d, "mode")


def _rename_field(d: Defs) -> None:
    _props(d)["directory"] = _props(d).pop("cwd")
    d["NewSessionRequest"]["required"] = ["directory"]


def _swap_field_type(d: Defs) -> None:
    _props(d)["sessionId"] = {"$ref": "#/$defs/Identifier"}


def _add_variant(d: Defs) -> None:
    d["SessionUpdate"]["oneOf"].append(
        {"properties": {"kind": {"const": "usage", "type": "string"}}, "required": ["kind"], "type": "object"}
    )


def _open_union(d: Defs) -> None:
    d["SessionUpdate"]["oneOf"].append({"not": {"anyOf": [{"required": ["kind"]}]}, "title": "other"})


def _change_payload(d: Defs) -> None:
    d["Steps"] = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    d["SessionUpdate"]["oneOf"][0]["allOf"] = [{"$ref": "#/$defs/Steps"}]


def _retitle_variant(d: Defs, title: str, number: str = "Number") -> None:
    d["Content"] = {
        "anyOf": [{"title": title, "type": "string"}, {"title": number, "type": "integer", "format": "uint16"}]
    }
    _props(d)["content"] = {"$ref": "#/$defs/Content"}


def _add_enum_value(d: Defs) -> None:
    d["StopReason"]["oneOf"].append({"const": "refusal", "type": "string"})


def _open_enum(d: Defs) -> None:
    d["StopReason"]["oneOf"].append({"type": "string", "title": "other"})


def _lenient(d: Defs) -> None:
    _props(d)["flag"]["x-deserialize-default-on-error"] = True


def _set(d: Defs, path: tuple[str, ...], value: Any) -> None:
    node = d
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _plain_union(d: Defs) -> None:
    """A union of two object types that adds nothing to them: no class of its own per variant."""
    d["Other"] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    d["Content"] = {"anyOf": [{"$ref": "#/$defs/Plan"}, {"$ref": "#/$defs/Other"}]}


def _shared_field_union(d: Defs) -> None:
    """The same union with a field shared by its variants: each variant gets a class of its own."""
    _plain_union(d)
    d["Content"]["properties"] = {"note": {"type": "string"}}


# (case id, old defs, new defs, expected rule ids); the reverse direction of each pair is
# checked too, against the mirror rules.
CASES: list[tuple[str, Defs, Defs, set[str]]] = [
    ("method-added", _base(), _changed(_add_method), {"method-added", "type-added"}),
    ("method-renamed", _base(), _changed(_rename_method), {"method-renamed"}),
    ("method-side-changed", _base(), _changed(_move_method), {"method-side-changed"}),
    (
        "method-kind-changed",
        _base(),
        _changed(lambda d: d.pop("NewSessionResponse")),
        {"method-kind-changed", "type-removed"},
    ),
    (
        "method-params-changed",
        _base(),
        _changed(
            lambda d: (
                d.__setitem__("CreateSession", {**d["NewSessionRequest"], "properties": {"x": {"type": "integer"}}}),
                d["NewSessionRequest"].pop("x-method"),
                d["NewSessionRequest"].pop("x-side"),
            )
        ),
        {"method-params-changed", "python-method-renamed", "type-added"},
    ),
    (
        "method-result-changed",
        _base(),
        _changed(
            lambda d: d.__setitem__(
                "SessionCreatedResponse",
                {**d.pop("NewSessionResponse"), "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            )
        ),
        {"method-result-changed", "type-added", "type-removed"},
    ),
    ("type-added", _base(), _changed(lambda d: d.__setitem__("Extra", {"type": "integer"})), {"type-added"}),
    ("type-renamed", _base(), _changed(_rename_type), {"type-renamed"}),
    (
        "type-kind-changed",
        _base(),
        _changed(lambda d: d.__setitem__("SessionId", {"type": "object", "properties": {"id": {"type": "string"}}})),
        {"type-kind-changed"},
    ),
    (
        "type-widened",
        _changed(lambda d: d.__setitem__("Extra", {"type": "integer", "format": "uint16"})),
        _changed(lambda d: d.__setitem__("Extra", {"type": "integer", "format": "uint32"})),
        {"type-widened"},
    ),
    ("type-changed", _base(), _changed(lambda d: d.__setitem__("SessionId", {"type": "integer"})), {"type-changed"}),
    ("field-added", _base(), _changed(lambda d: _props(d).__setitem__("mode", {"type": "string"})), {"field-added"}),
    ("required-field-added", _base(), _changed(_add_required), {"required-field-added"}),
    ("field-made-required", _base(), _changed(lambda d: _require(d, "limit")), {"field-made-required"}),
    ("field-renamed", _base(), _changed(_rename_field), {"field-renamed"}),
    (
        "field-widened",
        _base(),
        _changed(lambda d: _props(d)["limit"].__setitem__("format", "uint32")),
        {"field-widened"},
    ),
    (
        "field-widened-nullable",
        _base(),
        _changed(lambda d: _props(d)["cwd"].__setitem__("type", ["string", "null"])),
        {"field-widened"},
    ),
    (
        "field-type-changed",
        _base(),
        _changed(lambda d: _props(d).__setitem__("cwd", {"type": "integer"})),
        {"field-type-changed"},
    ),
    ("field-type-swapped", _base(), _changed(_swap_field_type), {"field-type-swapped"}),
    (
        "field-default-changed",
        _base(),
        _changed(lambda d: _props(d)["flag"].__setitem__("default", True)),
        {"field-default-changed"},
    ),
    ("variant-added", _base(), _changed(_add_variant), {"variant-added"}),
    ("variant-payload-changed", _base(), _changed(_change_payload), {"variant-payload-changed", "type-added"}),
    (
        "variant-renamed",
        _changed(lambda d: _retitle_variant(d, "Text")),
        _changed(lambda d: _retitle_variant(d, "String")),
        {"variant-renamed"},  # a string branch has no class of its own: nothing to rename
    ),
    (
        "class-renamed",
        _changed(lambda d: _retitle_variant(d, "Text")),
        _changed(lambda d: _retitle_variant(d, "Text", number="Count")),
        {"variant-renamed", "class-renamed"},  # a bounded integer branch has one (NumberContent)
    ),
    ("class-removed", _changed(_shared_field_union), _changed(_plain_union), {"class-removed", "type-kind-changed"}),
    ("union-opened", _base(), _changed(_open_union), {"union-opened", "variant-added"}),
    ("enum-value-added", _base(), _changed(_add_enum_value), {"enum-value-added"}),
    ("enum-opened", _base(), _changed(_open_enum), {"enum-opened"}),
    ("leniency-added", _base(), _changed(_lenient), {"leniency-added"}),
]

# The rule expected when a pair is read backwards (new -> old), where it is not the mirror.
REVERSED: dict[str, set[str]] = {
    "method-added": {"method-removed", "type-removed"},
    "method-renamed": {"method-renamed"},
    "method-side-changed": {"method-side-changed"},
    "method-kind-changed": {"method-kind-changed", "type-added"},
    "method-params-changed": {"method-params-changed", "python-method-renamed", "type-removed"},
    "method-result-changed": {"method-result-changed", "type-added", "type-removed"},
    "type-added": {"type-removed"},
    "type-renamed": {"type-renamed"},
    "type-kind-changed": {"type-kind-changed"},
    "type-widened": {"type-narrowed"},
    "type-changed": {"type-changed"},
    "field-added": {"field-removed"},
    "required-field-added": {"required-field-removed"},
    "field-made-required": {"field-made-optional"},
    "field-renamed": {"field-renamed"},
    "field-widened": {"field-narrowed"},
    "field-widened-nullable": {"field-narrowed"},
    "field-type-changed": {"field-type-changed"},
    "field-type-swapped": {"field-type-swapped"},
    "field-default-changed": {"field-default-changed"},
    "variant-added": {"variant-removed"},
    "variant-payload-changed": {"variant-payload-changed", "type-removed"},
    "variant-renamed": {"variant-renamed"},
    "class-renamed": {"variant-renamed", "class-renamed"},
    "class-removed": {"class-added", "type-kind-changed"},
    "union-opened": {"union-closed", "variant-removed"},
    "enum-value-added": {"enum-value-removed"},
    "enum-opened": {"enum-closed"},
    "leniency-added": {"leniency-removed"},
}


@pytest.mark.parametrize(("old", "new", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_fires_alone(old: Defs, new: Defs, expected: set[str]) -> None:
    assert _rules_of(old, new) == expected


@pytest.mark.parametrize(("old", "new", "case"), [(c[1], c[2], c[0]) for c in CASES], ids=[c[0] for c in CASES])
def test_reverse_pair_gives_the_mirror(old: Defs, new: Defs, case: str) -> None:
    assert _rules_of(new, old) == REVERSED[case]


def test_every_rule_is_exercised() -> None:
    exercised = {r for c in CASES for r in c[3]} | {r for rs in REVERSED.values() for r in rs}
    exercised |= {"stabilised", "destabilised", "capability-rule-added", "capability-rule-removed"}
    exercised |= {"capability-rule-changed"}
    # the feature rules: tests/unit/test_diff_features.py
    exercised |= {"feature-stabilised", "feature-destabilised", "feature-added", "feature-removed"}
    # the generated names no item carries: tests/unit/test_diff_names.py
    exercised |= {"builder-renamed", "state-property-renamed", "tracker-renamed", "message-class-renamed"}
    assert set(RULES) - exercised == set()


def test_every_add_kind_rule_has_its_mirror() -> None:
    for rule in RULES.values():
        if rule.mirror is None:
            assert rule.no_mirror, f"{rule.id} has neither a mirror nor a reason"
            continue
        mirror = RULES[rule.mirror]
        assert mirror.mirror == rule.id, f"{rule.id} -> {mirror.id} is not mirrored back"
        assert not rule.no_mirror
    add_kinds = [r for r in RULES if r.endswith(("-added", "-opened", "-widened", "stabilised", "-made-required"))]
    assert add_kinds and all(RULES[r].mirror for r in add_kinds)


def test_rule_ids_are_kebab_case_and_levels_known() -> None:
    for rule in RULES.values():
        assert rule.id == rule.id.lower() and " " not in rule.id and "_" not in rule.id
        assert rule.level in LEVELS and rule.category in ("wire", "source")


NORMALISED: list[tuple[str, Callable[[Defs], object]]] = [
    ("allOf-ref-vs-ref", lambda d: _props(d).__setitem__("sessionId", {"allOf": [{"$ref": "#/$defs/SessionId"}]})),
    ("single-branch-anyOf", lambda d: _props(d).__setitem__("cwd", {"anyOf": [{"type": "string"}]})),
    (
        "nullable-spelling",
        lambda d: _props(d).__setitem__(
            "limit", {"anyOf": [{"type": "integer", "format": "uint16"}, {"type": "null"}]}
        ),
    ),
    ("inlined-shape", lambda d: _props(d).__setitem__("sessionId", {"type": "string", "description": "inline"})),
    (
        "enum-spelling",
        lambda d: d.__setitem__("StopReason", {"type": "string", "enum": ["cancelled", "end_turn"]}),
    ),
    ("description-only", lambda d: _props(d)["cwd"].__setitem__("description", "the working directory")),
]


@pytest.mark.parametrize("edit", [n[1] for n in NORMALISED], ids=[n[0] for n in NORMALISED])
def test_representation_churn_is_not_a_change(edit: Callable[[Defs], object]) -> None:
    base = _changed(lambda d: _props(d).__setitem__("limit", {"type": ["integer", "null"], "format": "uint16"}))
    if edit is NORMALISED[2][1]:
        assert _rules_of(base, _changed(edit)) == set()
    else:
        assert _rules_of(_base(), _changed(edit)) == set()


def test_stabilisation_and_its_reverse() -> None:
    stable = _base()
    unstable = _changed(lambda d: _props(d).__setitem__("dirs", {"type": "array", "items": {"type": "string"}}))
    before = _diff(stable, unstable, old_unstable=unstable, new_unstable=unstable)
    assert [(f.rule, f.item, f.level) for f in before] == [("stabilised", "field:NewSessionRequest.dirs", "info")]
    after = _diff(unstable, stable, old_unstable=unstable, new_unstable=unstable)
    assert [(f.rule, f.item, f.level) for f in after] == [("destabilised", "field:NewSessionRequest.dirs", "breaking")]


def test_method_stabilisation() -> None:
    wider = _changed(_add_method)
    findings = _diff(_base(), wider, old_unstable=wider, new_unstable=wider)
    assert sorted((f.rule, f.item, f.level) for f in findings) == [
        ("stabilised", "method:agent:session/close", "info"),
        ("stabilised", "type:CloseRequest", "info"),
        ("stabilised", "type:CloseResponse", "info"),
    ]


def test_unstable_breaks_are_warnings() -> None:
    unstable = _changed(lambda d: _props(d).__setitem__("dirs", {"type": "string"}))
    gone = _changed(lambda d: _props(d).__setitem__("dirs", {"type": "integer"}))
    findings = _diff(_base(), _base(), old_unstable=unstable, new_unstable=gone)
    assert [(f.rule, f.level, f.stability) for f in findings] == [("field-type-changed", "warning", "unstable")]
    assert "no compatibility promise" in findings[0].notes[0]


def test_who_is_affected_follows_the_writer() -> None:
    # NewSessionRequest is written by the client (session/new is handled by the agent).
    findings = _diff(_base(), _changed(_add_required))
    assert findings[0].affects == ("old clients -> new agents",)

    # NewSessionResponse is written by the agent: a new required field breaks old agents.
    def add_to_response(d: Defs) -> None:
        _props(d, "NewSessionResponse")["modes"] = {"type": "string"}
        d["NewSessionResponse"]["required"].append("modes")

    findings = _diff(_base(), _changed(add_to_response))
    assert [(f.rule, f.affects) for f in findings] == [("required-field-added", ("old agents -> new clients",))]


def test_lenient_reader_softens_a_narrowing() -> None:
    old = _changed(_lenient)
    new = _changed(lambda d: (_lenient(d), _props(d).__setitem__("flag", {**_props(d)["flag"], "type": "integer"})))
    findings = _diff(old, new)
    assert [(f.rule, f.level) for f in findings] == [("field-type-changed", "warning")]


def test_extensible_union_softens_variant_changes() -> None:
    old = _changed(_open_union)
    new = _changed(lambda d: (_open_union(d), _add_variant(d)))
    assert [(f.rule, f.level) for f in _diff(old, new)] == [("variant-added", "info")]
    assert [(f.rule, f.level) for f in _diff(new, old)] == [("variant-removed", "warning")]


RULE_TABLE = {
    "rules": [
        {"method": "session/new", "needs": "agentCapabilities.x", "side": "agent", "presence": "true"},
        {"field": "NewSessionRequest.limit", "needs": "agentCapabilities.y", "side": "agent", "presence": "present"},
    ]
}


def test_capability_rule_table_changes() -> None:
    changed = copy.deepcopy(RULE_TABLE)
    changed["rules"][0]["presence"] = "present"
    del changed["rules"][1]
    changed["rules"].append(
        {"variant": "SessionUpdate[plan]", "needs": "clientCapabilities.z", "side": "client", "presence": "true"}
    )
    findings = _diff(_base(), _base(), old_rules=RULE_TABLE, new_rules=changed)
    assert sorted((f.rule, f.item) for f in findings) == [
        ("capability-rule-added", "variant:SessionUpdate[plan]"),
        ("capability-rule-changed", "method:session/new"),
        ("capability-rule-removed", "field:NewSessionRequest.limit"),
    ]
    assert _diff(_base(), _base(), old_rules=None, new_rules=changed) == []


@pytest.mark.parametrize(
    ("node", "text"),
    [
        ({"type": "null"}, "null"),
        ({"type": ["string", "null"]}, "string or null"),
        ({"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]}, "X or null"),
        ({"allOf": [{"$ref": "#/$defs/X"}], "description": "d"}, "X"),
        ({"type": "integer", "format": "uint16"}, "integer 0..65535"),
        ({"oneOf": [{"const": "b"}, {"const": "a"}]}, 'one of "a", "b"'),
        ({"anyOf": [{"const": "a"}, {"type": "string"}]}, 'one of "a" or another string'),
        ({"type": "array", "items": {"type": "string"}}, "array of string"),
        ({"description": "anything"}, "any value"),
    ],
)
def test_shapes_read_plainly(node: dict[str, Any], text: str) -> None:
    from acpgen.diff.relations import describe
    from acpgen.ir.shapes import canonical

    assert describe(canonical(node)) == text


# -- what issue 13 found the old diff model getting wrong ---------------------------------------


def _ids(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule, f.item) for f in findings}


def _alpha_union(inline: bool) -> Callable[[Defs], None]:
    alpha = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}

    def edit(d: Defs) -> None:
        d["Alpha"] = alpha
        d["Beta"] = {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}
        first = {"title": "alpha", **alpha} if inline else {"$ref": "#/$defs/Alpha"}
        d["Choice"] = {"anyOf": [first, {"$ref": "#/$defs/Beta"}]}
        _props(d)["choice"] = {"$ref": "#/$defs/Choice"}

    return edit


def test_a_variant_inlined_with_a_title_is_the_same_variant() -> None:
    """Variant identity is the wire shape: ``$ref`` to Alpha and the same shape inline (titled
    "alpha") read the same JSON, so no variant is removed or added and nothing breaks the wire."""
    findings = _diff(_changed(_alpha_union(inline=False)), _changed(_alpha_union(inline=True)))
    assert not [f for f in findings if f.category == "wire"], findings
    assert not {f.rule for f in findings} & {"variant-removed", "variant-added", "variant-renamed"}
    assert {f.rule for f in findings} <= {"class-added"}  # the inline variant gets a class of its own


def test_an_open_code_set_gains_a_value_without_a_warning() -> None:
    """A set of integer codes with a catch-all integer branch is open (as the IR and the models
    read it): old readers accept a new code, so adding one is information, not a warning."""

    def codes(*values: int) -> Callable[[Defs], None]:
        def edit(d: Defs) -> None:
            branches: list[dict[str, Any]] = [{"const": v, "type": "integer", "title": f"c{v}"} for v in values]
            d["Code"] = {"anyOf": [*branches, {"title": "Other", "type": "integer", "format": "int32"}]}
            _props(d)["code"] = {"$ref": "#/$defs/Code"}

        return edit

    findings = _diff(_changed(codes(1, 2)), _changed(codes(1, 2, 3)))
    assert [(f.rule, f.level) for f in findings] == [("enum-value-added", "info")]


def test_a_request_and_a_notification_of_one_name_are_both_compared() -> None:
    """One side may handle a request and a notification of the same wire name: both count."""

    def twins(d: Defs) -> None:
        d["NudgeRequest"] = {"type": "object", "x-method": "nudge", "x-side": "agent", "properties": {}}
        d["NudgeResponse"] = {"type": "object", "x-method": "nudge", "x-side": "agent", "properties": {}}
        d["NudgeNotification"] = {"type": "object", "x-method": "nudge", "x-side": "agent", "properties": {}}

    def without_notification(d: Defs) -> None:
        twins(d)
        d.pop("NudgeNotification")

    findings = _diff(_changed(twins), _changed(without_notification))
    assert ("method-removed", "method:agent:nudge") in _ids(findings)
    removed = [f for f in findings if f.rule == "method-removed"]
    assert len(removed) == 1 and "notification" in removed[0].message


def test_a_renamed_generated_class_is_a_source_break() -> None:
    findings = _diff(
        _changed(lambda d: _retitle_variant(d, "Text")), _changed(lambda d: _retitle_variant(d, "Text", number="Count"))
    )
    renamed = [f for f in findings if f.rule == "class-renamed"]
    assert [(f.category, f.level, f.old, f.new) for f in renamed] == [
        ("source", "breaking", "NumberContent", "CountContent")
    ]
