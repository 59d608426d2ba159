"""Session state (issue 24): how update kinds fold, derived from the schema, in every package.

Property tests (hypothesis, bounded): folding any sequence of schema-valid updates never
raises, is deterministic, and a trace of the same messages replays to the state the live fold
gave; a tool-call tracker's minimal updates fold back to the state it was given. Unit tests
pin the merge rules (present replaces, absent keeps, null clears only where every kind admits
null), chunk joining, unknown kinds kept, removal, and calls; mutated schemas show that a
new member is folded with no change and that a kind no rule fits fails generation with a
problem naming it, where it is, and what to do.
"""

from __future__ import annotations

import copy
import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acpgen.errors import AcpgenError
from acpgen.pipeline import Revision, SchemaFile
from acpgen.render.fold_views import fold_views
from tests.support.instances import instances

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BUILDS = {
    "acp_bindings": ROOT / "schema" / "v1" / "schema.json",
    "acp_bindings_unstable": ROOT / "schema" / "v1" / "schema.unstable.json",
    "acp_bindings_v2_unstable": ROOT / "schema" / "v2" / "schema.unstable.json",
}
IDS = ["a", "b"]


def schema(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def session_state(package: str) -> Any:
    return importlib.import_module(f"{package}.session_state")


def shared_ids(update: Any) -> Any:
    """Point the ids of a generated update at a small pool, so that updates meet the same things."""
    if not isinstance(update, dict):
        return update
    for name, value in list(update.items()):
        if name.endswith("Id") and name != "sessionId" and isinstance(value, str):
            update[name] = IDS[len(value) % 2]
        elif name == "plan" and isinstance(value, dict) and "planId" in value:
            value["planId"] = IDS[0]
    return update


def updates(package: str) -> st.SearchStrategy[list[Any]]:
    one = instances(schema(BUILDS[package]), "SessionUpdate", max_depth=3).map(shared_ids)
    return st.lists(one, max_size=12)


def trace_lines(updates: list[Any]) -> list[str]:
    lines = [
        json.dumps({"at": "", "direction": "in", "message": {"jsonrpc": "2.0", "id": 0, "result": {"sessionId": "s"}}})
    ]
    lines.insert(
        0,
        json.dumps(
            {
                "at": "",
                "direction": "out",
                "message": {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "session/new",
                    "params": {"cwd": "/", "mcpServers": []},
                },
            }
        ),
    )
    for update in updates:
        message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}
        lines.append(json.dumps({"at": "", "direction": "in", "message": message}))
    return lines


@pytest.mark.parametrize("package", sorted(BUILDS))
def test_folding_valid_updates_never_raises_is_deterministic_and_replays(package: str) -> None:
    module = session_state(package)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(updates(package))
    def check(sequence: list[Any]) -> None:
        live = module.SessionState.new("s").call("session/new", {"cwd": "/", "mcpServers": []}, {"sessionId": "s"})
        again = live
        for update in sequence:
            notification = module.SessionState.NOTIFICATION.model_validate({"sessionId": "s", "update": update})
            live = live.update(notification)  # the typed path a client's handler takes
            again = again.update(copy.deepcopy(update))  # the wire path
        assert live.to_json() == again.to_json()
        replayed = module.SessionState.from_lines(trace_lines(sequence))
        assert replayed["s"].to_json() == live.to_json()
        json.dumps(live.to_json())  # the state is JSON
        for slot in module.RULES.slots.values():  # every typed reading works
            getattr(live, slot.name if slot.name.isidentifier() else slot.name + "_")

    check()


def state(package: str = "acp_bindings") -> Any:
    return session_state(package).SessionState.new("s")


def test_patch_present_replaces_absent_keeps_null_clears_where_nullable() -> None:
    s = state().update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "Read",
            "status": "pending",
            "name": "read",
            "rawInput": {"p": 1},
        }
    )
    s = s.update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "status": "completed",
            "title": None,
            "name": None,
            "rawInput": None,
        }
    )
    fields = dict(s.tool_calls["t"].fields)
    # title: null ignored (a ToolCall's title cannot be null); name and rawInput: cleared; status replaced
    assert fields == {"toolCallId": "t", "title": "Read", "status": "completed"}
    s = s.update({"sessionUpdate": "session_info_update", "title": "A"}).update(
        {"sessionUpdate": "session_info_update", "updatedAt": "2025-01-01T00:00:00Z"}
    )
    assert s.session_info.title == "A" and s.session_info.updated_at is not None
    assert s.update({"sessionUpdate": "session_info_update", "title": None}).session_info.title is None


def test_meta_merges_member_by_member_and_keeps_every_map_sent() -> None:
    """An agent's ``_meta`` (claude-agent-acp: ``terminal_info`` on the tool call, then
    ``terminal_output`` and ``terminal_exit`` on two updates; codex-acp: ``terminal_output`` in
    several chunks) survives the fold: members merge, and the maps sent are kept in order."""
    s = state().update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "ls",
            "_meta": {"claudeCode": {"toolName": "Bash"}, "terminal_info": {"terminal_id": "t"}},
        }
    )
    for data in ("a\n", "b\n"):
        chunk = {"terminal_output": {"terminal_id": "t", "data": data}}
        s = s.update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "_meta": chunk})
    exit_ = {"terminal_exit": {"terminal_id": "t", "exit_code": 0, "signal": None}}
    s = s.update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed", "_meta": exit_})
    tool = s.tool_calls["t"]
    assert tool.fields["_meta"] == {
        "claudeCode": {"toolName": "Bash"},
        "terminal_info": {"terminal_id": "t"},
        "terminal_output": {"terminal_id": "t", "data": "b\n"},  # the latest of each member
        "terminal_exit": {"terminal_id": "t", "exit_code": 0, "signal": None},
    }
    sent = tool.entry.history["_meta"]
    assert [m.get("terminal_output", {}).get("data") for m in sent] == [None, "a\n", "b\n", None]
    assert s.to_json()["slots"]["tool_calls"][0]["history"]["_meta"] == list(sent)
    assert isinstance(tool.record.meta, dict) and "terminal_exit" in tool.record.meta
    cleared = s.update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "_meta": None})
    assert "_meta" not in cleared.tool_calls["t"].fields  # a null still clears the map (it admits null)


def test_meta_of_session_wide_records_merges_too() -> None:
    s = state().update({"sessionUpdate": "current_mode_update", "currentModeId": "a", "_meta": {"x": 1}})
    s = s.update({"sessionUpdate": "current_mode_update", "currentModeId": "b", "_meta": {"y": 2}})
    assert s.current_mode.current_mode_id == "b" and s.wire.record("current_mode").fields["_meta"] == {"x": 1, "y": 2}


def test_tracker_sends_only_the_meta_members_that_changed() -> None:
    module = session_state("acp_bindings")
    from acp_bindings import builders

    tracker, s = module.ToolCallTracker(), module.SessionState.new("s")
    reported = []
    for meta in ({"a": 1}, {"a": 1, "b": [1]}, {"a": 2, "b": [1]}):
        thing = builders.tool_call_session_update("t", "Run", meta=meta)
        sent = tracker.report(thing)
        reported.append(sent.meta if sent is not None else None)
        s = s.update(sent) if sent is not None else s
        assert s.tool_calls["t"].fields["_meta"] == meta
    assert reported == [{"a": 1}, {"b": [1]}, {"a": 2}]


def test_whole_kinds_replace_what_they_declare_and_keep_the_rest() -> None:
    s = state().call(
        "session/new",
        {"cwd": "/", "mcpServers": []},
        {
            "sessionId": "s",
            "modes": {"currentModeId": "a", "availableModes": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}]},
        },
    )
    s = s.update({"sessionUpdate": "current_mode_update", "currentModeId": "b"})
    assert s.current_mode.current_mode_id == "b" and len(s.current_mode.available_modes) == 2
    s = s.update({"sessionUpdate": "usage_update", "used": 1, "size": 9, "cost": {"amount": 1.0, "currency": "USD"}})
    assert s.update({"sessionUpdate": "usage_update", "used": 2, "size": 9}).usage.cost is None
    s = s.call("session/set_mode", {"sessionId": "s", "modeId": "a"}, {})
    assert s.current_mode.current_mode_id == "a"
    assert (
        s.call(
            "session/set_mode", {"sessionId": "s", "modeId": "b"}, error={"code": -32603, "message": "no"}
        ).current_mode.current_mode_id
        == "a"
    )


def test_chunks_join_per_message_and_keep_their_blocks() -> None:
    def chunk(kind: str, text: str, **more: Any) -> dict[str, Any]:
        return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **more}

    s = state()
    for update in (
        chunk("agent_thought_chunk", "hm"),
        chunk("agent_message_chunk", "He"),
        chunk("agent_message_chunk", "llo"),
    ):
        s = s.update(update)
    s = s.update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"})
    s = s.update(chunk("agent_message_chunk", "after")).call(
        "session/prompt", {"sessionId": "s", "prompt": []}, {"stopReason": "end_turn"}
    )
    s = s.update(chunk("agent_message_chunk", "next turn"))
    s = s.update(chunk("agent_message_chunk", "A", messageId="m")).update(
        chunk("user_message_chunk", "B", messageId="m")
    )
    texts = [["".join(b.text for b in m.content), m.kind] for m in s.messages.values()]
    assert texts == [
        ["hm", "agent_thought_chunk"],
        ["Hello", "agent_message_chunk"],
        ["after", "agent_message_chunk"],
        ["next turn", "agent_message_chunk"],
        ["AB", "agent_message_chunk"],
    ]
    assert s.messages["m"].kinds == ("agent_message_chunk", "user_message_chunk")


def test_unknown_kinds_are_kept() -> None:
    v1 = state().update({"sessionUpdate": "brand_new", "x": 1})  # v1's union is closed: the models refuse it
    assert [(u.kind, u.payload) for u in v1.unknown] == [("brand_new", {"sessionUpdate": "brand_new", "x": 1})]
    v2 = state("acp_bindings_v2_unstable").update({"sessionUpdate": "_vendor_kind", "x": [1]})  # the catch-all
    assert [(u.kind, u.payload) for u in v2.unknown] == [("_vendor_kind", {"sessionUpdate": "_vendor_kind", "x": [1]})]
    assert v2.to_json()["unknown"][0]["payload"] == {"sessionUpdate": "_vendor_kind", "x": [1]}


def test_removal_and_nested_keys() -> None:
    s = state("acp_bindings_unstable").update(
        {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p", "content": "# x"}}
    )
    assert list(s.plans) == ["p"]
    assert list(s.update({"sessionUpdate": "plan_removed", "planId": "p"}).plans) == []


def test_tracker_updates_fold_back_to_the_state() -> None:
    module = session_state("acp_bindings")
    from acp_bindings import builders

    statuses = st.sampled_from(["pending", "in_progress", "completed", "failed"])
    titles = st.sampled_from(["Read", "Edit", "Run"])
    steps = st.lists(st.tuples(titles, statuses, st.booleans()), min_size=1, max_size=8)

    @settings(max_examples=60, deadline=None)
    @given(steps)
    def check(sequence: list[tuple[str, str, bool]]) -> None:
        tracker, s = module.ToolCallTracker(), module.SessionState.new("s")
        for title, status, named in sequence:
            extra = {"name": "tool"} if named else {}
            thing = builders.tool_call_session_update("t", title, status=status, **extra)
            sent = tracker.report(thing)
            if sent is not None:
                s = s.update(sent)
            assert dict(s.tool_calls["t"].fields) == {
                k: v for k, v in thing.model_dump(mode="json").items() if k != "sessionUpdate"
            }

    check()


@pytest.mark.parametrize(
    "package", ["acp_bindings", "acp_bindings_unstable", "acp_bindings_v2", "acp_bindings_v2_unstable"]
)
def test_every_package_has_state_trace_and_permissions(package: str) -> None:
    module = session_state(package)
    assert "tool_calls" in module.RULES.slots and "messages" in module.RULES.slots
    permissions = importlib.import_module(f"{package}.permissions")
    if "v2" in package:  # the draft's permission request names a tool call by id only: no kind to decide by
        assert permissions.REASON == "RequestPermissionRequest lacks toolCall: no policy can read it."
    else:
        assert permissions.PermissionPolicy is not None
    assert not (ROOT / "generated" / package / "trace.py").exists()  # the viewer is a tool: acpgen trace show


def test_fixtures_without_session_updates_say_why() -> None:
    folder = ROOT / "tests" / "golden" / "unions" / "unions_stable"
    text = (folder / "session_state.py").read_text(encoding="utf-8")
    assert "has no SessionUpdate union: there is no session update to fold" in text
    selection = ROOT / "tests" / "golden" / "feature-selections" / "turn_pause_plan_operations"
    assert "class SessionState(StateBase)" in next(selection.rglob("session_state.py")).read_text(encoding="utf-8")


# -- the rules follow the schema
# ---------------------------------------------------------------------


def rules_of(doc: dict[str, Any]) -> Any:
    from acpgen import ir

    source = ir.Source(package="test", version="0", file="schema.json", sha256="0")
    revision = Revision(stable=SchemaFile(doc=doc, source=source), unstable=None, protocol_version=1)
    return fold_views(revision.protocol("stable").session)  # as rendering reads it: its problems raised


def pinned() -> dict[str, Any]:
    return schema(BUILDS["acp_bindings"])


def test_a_new_member_is_folded_with_no_change() -> None:
    doc = pinned()
    doc["$defs"]["ToolCallUpdate"]["properties"]["progress"] = {"type": ["integer", "null"]}
    rules = rules_of(doc)
    assert "progress" in next(s for s in rules.slots if s.name == "tool_calls").clears
    assert {k.kind: k.how for k in rules.kinds}["tool_call_update"] == "patch"


def test_open_maps_merge_as_the_schema_declares_them() -> None:
    """Derived, not listed: every slot's ``_meta`` merges; a new member declared as an object of
    any members merges too; one that some kind of the slot declares otherwise is replaced."""
    doc = pinned()
    rules = {s.name: s for s in rules_of(doc).slots}
    assert all(slot.merges == ("_meta",) for slot in rules.values())
    doc["$defs"]["ToolCallUpdate"]["properties"]["extras"] = {"type": ["object", "null"]}
    doc["$defs"]["ToolCall"]["properties"]["extras"] = {"type": "object"}
    doc["$defs"]["ToolCallUpdate"]["properties"]["stats"] = {"type": ["object", "null"]}
    doc["$defs"]["ToolCall"]["properties"]["stats"] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    merges = next(s for s in rules_of(doc).slots if s.name == "tool_calls").merges
    assert merges == ("_meta", "extras")


def add_kind(doc: dict[str, Any], tag: str, payload: str, properties: dict[str, Any], required: list[str]) -> None:
    doc["$defs"][payload] = {"type": "object", "properties": properties, "required": required}
    doc["$defs"]["SessionUpdate"]["oneOf"].append(
        {
            "type": "object",
            "properties": {"sessionUpdate": {"type": "string", "const": tag}},
            "required": ["sessionUpdate"],
            "allOf": [{"$ref": f"#/$defs/{payload}"}],
        }
    )


def test_a_new_kind_that_fits_the_rules_is_folded() -> None:
    doc = pinned()
    add_kind(
        doc,
        "review_update",
        "ReviewUpdate",
        {"reviewId": {"type": "string"}, "verdict": {"type": ["string", "null"]}},
        ["reviewId"],
    )
    kinds = {k.kind: (k.how, k.slot) for k in rules_of(doc).kinds}
    assert kinds["review_update"] == ("patch", "reviews")


@pytest.mark.parametrize(
    ("tag", "properties", "required", "says"),
    [
        (
            "log_chunk",
            {"logId": {"type": "string"}, "a": {"type": "string"}, "b": {"type": "string"}},
            ["logId", "a", "b"],
            "2 required members besides its id (a, b), not one piece",
        ),
        (
            "log_removed",
            {"logId": {"type": "string"}, "why": {"type": "string"}},
            ["logId"],
            "carries more than its id: why",
        ),
        (
            "link_update",
            {"fromId": {"type": "string"}, "toId": {"type": "string"}},
            ["fromId", "toId"],
            "has 2 ids (fromId, toId)",
        ),
    ],
)
def test_a_new_kind_no_rule_fits_fails_generation_clearly(
    tag: str, properties: dict[str, Any], required: list[str], says: str
) -> None:
    doc = pinned()
    add_kind(doc, tag, "NewKind", properties, required)
    with pytest.raises(AcpgenError) as raised:
        rules_of(doc)
    (problem,) = raised.value.problems
    assert says in problem.what and repr(tag) in problem.what
    assert problem.where == "schema.json#/$defs/NewKind"
    assert "docs/session-state.md" in problem.hint
