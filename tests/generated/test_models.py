"""Behaviour of the generated models on real schema types: each a promise the README or docs/bindings.md makes."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from acpgen.ir.naming import snake
from tests.support.bindings import ROOT, adapter, field_doc, models, read, wire

GENERATED = ROOT / "generated"


def _errors(variant: str, def_name: str, value: Any) -> list[Any]:
    with pytest.raises(ValidationError) as caught:
        read(variant, def_name, value)
    return caught.value.errors()


# --- closed tagged unions --------------------------------------------------------------------

CLOSED_UNIONS = {
    "SessionUpdate": ("sessionUpdate", "agent_message_chunk", "ToolCallSessionUpdate"),
    "ContentBlock": ("type", "text", "ImageContentBlock"),
    "ToolCallContent": ("type", "diff", "TerminalToolCallContent"),
    "RequestPermissionOutcome": ("outcome", "cancelled", "SelectedRequestPermissionOutcome"),
    "SessionConfigOption": ("type", "select", "BooleanSessionConfigOption"),
}


@pytest.mark.parametrize("def_name", sorted(CLOSED_UNIONS))
def test_closed_union_is_discriminated(def_name: str) -> None:
    tag, _, variant_class = CLOSED_UNIONS[def_name]
    schema = adapter("stable", def_name).core_schema
    assert '"tagged-union"' in repr(schema).replace("'", '"'), f"{def_name} is not a discriminated union"
    errors = _errors("stable", def_name, {tag: "no_such_kind"})
    assert errors[0]["type"] == "union_tag_invalid"
    assert hasattr(models("stable"), variant_class), "variant classes are named from their tag"


def test_variant_class_names_come_from_tags_never_positions() -> None:
    for variant in ("stable", "unstable"):
        text = (GENERATED / f"acp_bindings{'_unstable' if variant == 'unstable' else ''}" / "models.py").read_text()
        numbered = re.findall(r"^(?:class (\w*?[A-Za-z]\d+)\(|(\w*?[A-Za-z]\d+) = )", text, flags=re.MULTILINE)
        assert numbered == [], f"numbered class or type names in the {variant} build: {numbered}"
    # the branches of unions of scalars that need a type of their own are named from their titles
    assert hasattr(models("stable"), "NumberRequestId") and hasattr(models("stable"), "OtherErrorCode")
    assert hasattr(models("stable"), "IntegerElicitationContentValue")


def test_tagged_branch_over_a_union_payload_is_spread_into_named_classes() -> None:
    session = {"mode": "form", "sessionId": "s1", "message": "Name?", "requestedSchema": {"type": "object"}}
    form = read("stable", "CreateElicitationRequest", session)
    assert type(form).__name__ == "SessionFormCreateElicitationRequest"
    assert wire("stable", "CreateElicitationRequest", form) == session
    request = {"mode": "_acme", "requestId": 7, "message": "x", "extra": [1]}
    other = read("stable", "CreateElicitationRequest", request)
    assert type(other).__name__ == "RequestOtherCreateElicitationRequest"
    assert wire("stable", "CreateElicitationRequest", other) == request
    idle = read("unstable", "StateUpdate", {"state": "idle", "stopReason": "end_turn"})
    assert type(idle).__name__ == "EndTurnStateUpdateIdle"


def test_tagged_union_reads_the_right_variant() -> None:
    update = read("stable", "SessionUpdate", {"sessionUpdate": "plan", "entries": []})
    assert type(update).__name__ == "PlanSessionUpdate"
    block = read("stable", "ContentBlock", {"type": "image", "data": "aGk=", "mimeType": "image/png"})
    assert type(block).__name__ == "ImageContentBlock"


# --- unions with an untagged default branch, extensible unions, open enums -----------------


def test_untagged_default_branch_is_chosen_without_a_tag() -> None:
    stdio = read("stable", "McpServer", {"name": "fs", "command": "/bin/mcp", "args": [], "env": []})
    assert type(stdio).__name__ == "McpServerStdio"
    http = read("stable", "McpServer", {"type": "http", "name": "web", "url": "https://x.test/mcp", "headers": []})
    assert type(http).__name__ == "HttpMcpServer"
    assert wire("stable", "McpServer", stdio) == {"name": "fs", "command": "/bin/mcp", "args": [], "env": []}


def test_unknown_tag_of_a_defaulted_union_is_read_as_the_default_branch() -> None:
    # the untagged stdio branch admits any `type`, in the schema as in upstream's serde reader
    stdio = read("stable", "McpServer", {"type": "stdio", "name": "fs", "command": "/bin/mcp", "args": [], "env": []})
    assert type(stdio).__name__ == "McpServerStdio"
    errors = _errors("stable", "McpServer", {"type": "carrier-pigeon", "name": "x"})
    assert {e["loc"][-1] for e in errors} >= {"command"}  # validated as the default branch, which it is not


def test_extensible_union_keeps_unknown_tag_and_payload() -> None:
    payload = {"state": "_acme_paused", "reason": "quota", "_meta": {"k": 1}}
    value = read("unstable", "StateUpdate", payload)
    assert type(value).__name__ == "OtherStateUpdate"
    assert wire("unstable", "StateUpdate", value) == payload


def test_extensible_union_still_rejects_a_malformed_known_variant() -> None:
    good = read("stable", "CreateElicitationResponse", {"action": "accept", "content": {"name": "x"}})
    assert type(good).__name__ == "AcceptCreateElicitationResponse"
    errors = _errors("stable", "CreateElicitationResponse", {"action": "accept", "content": 42})
    assert all("Other" not in str(e["loc"]) for e in errors), "a malformed known variant fell into the catch-all"


MALFORMED_KNOWN = {
    # (union, value, branch read): the known branch refuses it, the untagged default branch admits it
    "terminal-auth-method-bad-args": (
        "AuthMethod",
        {"type": "terminal", "id": "login", "name": "Log in", "args": "--no-browser"},
        "AuthMethodAgent",
    ),
    "boolean-config-value-not-boolean": (
        "SetSessionConfigOptionRequest",
        {"sessionId": "s1", "configId": "effort", "type": "boolean", "value": "high"},
        "ValueIdSetSessionConfigOptionRequest",
    ),
}


@pytest.mark.parametrize("variant", ["stable", "unstable"])
@pytest.mark.parametrize("case", sorted(MALFORMED_KNOWN))
def test_a_malformed_known_variant_is_read_as_the_default_branch_that_admits_it(case: str, variant: str) -> None:
    # the schema's anyOf admits it through the untagged default branch (which takes members it does
    # not name), as upstream's serde reader (an untagged fallback variant) and the TypeScript SDK do
    union, value, branch = MALFORMED_KNOWN[case]
    read_value = read(variant, union, value)
    assert type(read_value).__name__ == branch
    assert wire(variant, union, read_value) == value  # what the branch does not name is kept
    assert read_value.model_extra.get("type") == value["type"]


def test_a_malformed_known_variant_the_default_refuses_reports_its_own_branch() -> None:
    errors = _errors("stable", "McpServer", {"type": "http", "name": "web", "url": 5, "headers": []})
    assert [e["loc"][-1] for e in errors] == ["url"], errors  # the http branch's error, not stdio's


@pytest.mark.parametrize("tag", [[], ["http"], {}, {"type": "http"}, 1, True])
def test_a_tag_that_is_not_a_string_is_read_not_crashed_on(tag: Any) -> None:
    # a defaulted union: the untagged default branch ignores the malformed tag, as the SDK's reader does
    stdio = {"type": tag, "name": "fs", "command": "/bin/mcp", "args": [], "env": []}
    assert type(read("stable", "McpServer", stdio)).__name__ == "McpServerStdio"
    # an extensible union: the catch-all takes string tags only, so a malformed tag is a validation error
    _errors("stable", "CreateElicitationResponse", {"action": tag})
    # a lenient tag (x-deserialize-default-on-error): a malformed stopReason means none was reported
    idle = read("unstable", "IdleStateUpdate", {"stopReason": tag})
    assert idle.stop_reason is None and type(idle).__name__ == "NoneIdleStateUpdate"


def test_open_string_enum_accepts_unknown_values() -> None:
    assert read("unstable", "LlmProtocol", "anthropic") == "anthropic"
    assert read("unstable", "LlmProtocol", "_acme_proto") == "_acme_proto"
    assert read("stable", "ErrorCode", -32099) == -32099


def test_closed_enum_rejects_unknown_values() -> None:
    assert read("stable", "StopReason", "end_turn") == "end_turn"
    _errors("stable", "StopReason", "gave_up")


def test_a_nullable_map_is_typed_as_the_schema_says() -> None:
    # ElicitationAcceptAction.content: object | null, each value an ElicitationContentValue
    accept = read("stable", "ElicitationAcceptAction", {"content": {"name": "x", "age": 3, "tags": ["a"]}})
    assert accept.content == {"name": "x", "age": 3, "tags": ["a"]}
    for bad in (None, {"k": 1}, [1]):
        _errors("stable", "ElicitationAcceptAction", {"content": {"value": bad}})
    assert read("stable", "ElicitationAcceptAction", {"content": None}).content is None


def test_an_object_type_without_properties_keeps_its_members() -> None:
    # NoticeCapabilities is {"type": "object"}: any member is part of it, as a peer may add some
    caps = read("unstable", "ClientSessionCapabilities", {"notices": {"levels": ["warning"]}})
    assert caps.notices is not None and wire("unstable", "ClientSessionCapabilities", caps) == {
        "notices": {"levels": ["warning"]}
    }


# --- required, optional, nullable; defaults ---------------------------------------------------


def test_optional_non_nullable_field_rejects_null() -> None:
    # SetProviderRequest.headers: optional object, no default, not nullable, no lenience
    base = {"providerId": "main", "apiType": "openai", "baseUrl": "https://llm.test"}
    assert read("unstable", "SetProviderRequest", {**base, "headers": {"a": "b"}}).headers == {"a": "b"}
    errors = _errors("unstable", "SetProviderRequest", {**base, "headers": None})
    assert errors[0]["loc"][0] == "headers" and errors[0]["input"] is None
    # ElicitationSchema.properties: optional with a default, not nullable
    assert _errors("stable", "ElicitationSchema", {"type": "object", "properties": None})[0]["loc"][0] == "properties"


def test_lenient_optional_bool_reads_null_as_its_default() -> None:
    # ClientCapabilities.terminal is default-on-error in 2.4.0: null is an error, read as the default
    assert read("stable", "ClientCapabilities", {"terminal": None}).terminal is False


def test_optional_field_may_be_absent() -> None:
    req = read("stable", "ReadTextFileRequest", {"sessionId": "s", "path": "/a"})
    assert req.line is None and "line" not in req.model_fields_set


def test_required_field_must_be_present() -> None:
    errors = _errors("stable", "ReadTextFileRequest", {"sessionId": "s"})
    assert errors[0]["type"] == "missing" and errors[0]["loc"] == ("path",)


def test_nullable_optional_field_accepts_null() -> None:
    diff = read("stable", "Diff", {"path": "/a", "oldText": None, "newText": "x"})
    assert diff.old_text is None


def test_object_default_becomes_a_model_instance() -> None:
    init = read("stable", "InitializeRequest", {"protocolVersion": 1})
    caps = init.client_capabilities
    assert isinstance(caps, BaseModel) and type(caps).__name__ == "ClientCapabilities"
    assert isinstance(caps.fs, BaseModel) and caps.fs.read_text_file is False


# --- integer bounds -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("def_name", "base", "field", "low", "high"),
    [
        ("InitializeRequest", {}, "protocolVersion", 0, 2**16 - 1),  # uint16
        ("ReadTextFileRequest", {"sessionId": "s", "path": "/a"}, "line", 0, 2**32 - 1),  # uint32
        ("IntegerPropertySchema", {"type": "integer"}, "minimum", -(2**63), 2**63 - 1),  # int64
        ("CreateTerminalRequest", {"sessionId": "s", "command": "ls"}, "outputByteLimit", 0, 2**64 - 1),  # uint64
    ],
)
def test_integer_format_bounds(def_name: str, base: dict[str, Any], field: str, low: int, high: int) -> None:
    read("stable", def_name, {**base, field: low})
    read("stable", def_name, {**base, field: high})
    for bad in (low - 1, high + 1):
        errors = _errors("stable", def_name, {**base, field: bad})
        assert errors[0]["loc"][0] == field


# --- JSON types: strict everywhere, integers also from integral floats ----------------------------


@pytest.mark.parametrize(
    ("def_name", "bad"),
    [
        ("RequestId", True),
        ("RequestId", 1.5),
        ("ErrorCode", "1"),
        ("ErrorCode", True),
        ("ProtocolVersion", "1"),
        ("ProtocolVersion", False),
        ("ElicitationContentValue", None),
    ],
)
def test_standalone_types_read_json_types_as_strictly_as_the_models(def_name: str, bad: Any) -> None:
    # a TypeAdapter of a type alias has no model config: the alias itself must be strict
    reader = TypeAdapter(getattr(models("stable"), def_name))
    with pytest.raises(ValidationError):
        reader.validate_python(bad)
    with pytest.raises(ValidationError):
        reader.validate_json(json.dumps(bad))


def test_a_message_envelope_refuses_an_id_of_the_wrong_json_type() -> None:
    _errors("stable", "ClientResponse", {"id": True, "result": {}})
    _errors("stable", "AgentRequest", {"id": [1], "method": "x"})


@pytest.mark.parametrize(
    ("def_name", "base", "field"),
    [
        ("ReadTextFileRequest", {"sessionId": "s", "path": "/a"}, "line"),  # a uint32 field
        ("InitializeRequest", {}, "protocolVersion"),  # through the ProtocolVersion alias
        ("CancelRequestNotification", {}, "requestId"),  # through RequestId, a union
        ("Error", {"message": "m"}, "code"),  # through ErrorCode, an open enum
        ("TerminalExitStatus", {}, "exitCode"),  # a lenient field
    ],
)
def test_integers_are_read_from_integral_floats(def_name: str, base: dict[str, Any], field: str) -> None:
    # JSON has one number type: 3.0 is the integer 3 to every JSON reader, the SDK's included
    attribute = snake(field)
    for value in (1, -32700) if def_name == "Error" else (1,):
        given = {**base, field: float(value)}
        for obj in (read("stable", def_name, given), adapter("stable", def_name).validate_json(json.dumps(given))):
            assert getattr(obj, attribute) == value and type(getattr(obj, attribute)) is int
    fraction = {**base, field: 1.5}
    if def_name == "TerminalExitStatus":  # x-deserialize-default-on-error: a fraction reads as the default
        assert read("stable", def_name, fraction).exit_code is None
    else:
        assert _errors("stable", def_name, fraction)


# --- lenient reading keywords ---------------------------------------------------------------------


def test_default_on_null_on_a_required_field() -> None:
    req = read("stable", "NewSessionRequest", {"cwd": "/w", "mcpServers": None})
    assert req.mcp_servers == []
    # still required: absent is an error
    assert _errors("stable", "NewSessionRequest", {"cwd": "/w"})[0]["loc"] == ("mcpServers",)


def test_default_on_null_on_an_optional_field() -> None:
    req = read("stable", "NewSessionRequest", {"cwd": "/w", "mcpServers": [], "additionalDirectories": None})
    assert req.additional_directories == []


def test_default_on_null_on_a_map_reads_null_as_empty() -> None:
    # AuthMethodTerminal.env is a map (string -> string) with x-deserialize-default-on-null
    terminal = {"type": "terminal", "id": "t", "name": "Terminal"}
    assert read("stable", "AuthMethod", {**terminal, "env": None}).env == {}
    assert read("stable", "AuthMethod", {**terminal, "args": None}).args == []


def test_default_on_error_on_a_nullable_list_reads_a_bad_value_as_null_not_empty() -> None:
    # an empty list and no list mean different things: a bad value reads as the default, which is null
    for bad in ("x", 1, {"k": 1}):
        assert read("stable", "LoadSessionResponse", {"configOptions": bad}).config_options is None
        assert read("stable", "Annotations", {"audience": bad}).audience is None
    assert read("stable", "ToolCallUpdate", {"toolCallId": "t", "content": "x"}).content is None


def test_default_on_error_on_a_field_that_is_not_nullable_reads_null_as_the_default() -> None:
    # ToolCall.content is a list, not nullable, with x-deserialize-default-on-error: null is an error, read as []
    call = read("stable", "ToolCall", {"toolCallId": "t", "title": "T", "content": None, "status": None})
    assert call.content == [] and call.status is None
    assert read("stable", "ToolCall", {"toolCallId": "t", "title": "T", "locations": None}).locations == []


def test_out_of_range_value_of_a_lenient_field_reads_as_the_default() -> None:
    link = read("stable", "ResourceLink", {"name": "n", "uri": "file:///a", "size": 2**63})
    assert link.size is None and read("stable", "ResourceLink", {"name": "n", "uri": "u", "size": 2**63 - 1}).size


def test_json_types_are_not_coerced() -> None:
    limit = {"sessionId": "s", "command": "ls", "outputByteLimit": "10"}
    assert _errors("stable", "CreateTerminalRequest", limit)[0]["loc"] == ("outputByteLimit",)
    assert _errors("stable", "ReadTextFileRequest", {"sessionId": "s", "path": "/a", "line": "3"})


def test_default_on_error_reads_a_malformed_value_as_the_default() -> None:
    req = read("stable", "NewSessionRequest", {"cwd": "/w", "mcpServers": [], "_meta": "not an object"})
    assert req.meta is None
    init = read("stable", "InitializeRequest", {"protocolVersion": 1, "clientCapabilities": "yes"})
    assert type(init.client_capabilities).__name__ == "ClientCapabilities"
    assert init.client_capabilities.terminal is False


@pytest.mark.parametrize(
    ("variant", "def_name", "payload"),
    [
        # a tagged branch spread over the union of its payload (form or url, each by session or request)
        (
            "stable",
            "CreateElicitationRequest",
            {"mode": "form", "sessionId": "s", "message": "m", "requestedSchema": {}},
        ),
        (
            "stable",
            "CreateElicitationRequest",
            {"mode": "url", "requestId": 1, "message": "m", "elicitationId": "e", "url": "u"},
        ),
        # inline branches of a union without a tag
        ("unstable", "MessageMcpResponse", {"result": {}}),
        ("unstable", "MessageMcpResponse", {"error": {"code": 1, "message": "m"}}),
    ],
)
def test_lenient_meta_is_read_leniently_on_every_union_branch(
    variant: str, def_name: str, payload: dict[str, Any]
) -> None:
    for bad in ("x", 5, [], True):
        value = read(variant, def_name, {**payload, "_meta": bad})
        assert value.meta is None  # the attribute is `meta` on every branch, as on every model
    assert read(variant, def_name, {**payload, "_meta": {"k": 1}}).meta == {"k": 1}


def test_skip_invalid_items_drops_only_the_bad_items() -> None:
    good = {"content": "write tests", "priority": "high", "status": "pending"}
    plan = read("stable", "Plan", {"entries": [good, {"content": 3}, good]})
    assert len(plan.entries) == 2


def test_wholly_malformed_list_reads_as_the_default_not_an_error() -> None:
    plan = read("stable", "Plan", {"entries": "not a list"})
    assert plan.entries == []


def test_lenience_does_not_apply_where_the_schema_does_not_ask() -> None:
    # cwd has no x-deserialize keyword: a wrong type stays an error
    assert _errors("stable", "NewSessionRequest", {"cwd": 5, "mcpServers": []})[0]["loc"] == ("cwd",)


# --- names, aliases, docstrings, markers ------------------------------------------------------


def test_snake_case_attributes_with_wire_aliases() -> None:
    fields = models("stable").NewSessionRequest.model_fields
    assert fields["mcp_servers"].alias == "mcpServers"
    assert fields["meta"].alias == "_meta"


@pytest.mark.parametrize("package", ["acp_bindings", "acp_bindings_unstable"])
def test_a_field_writes_its_alias_and_reading_rules_in_one_annotated(package: str) -> None:
    """``Annotated[T, Field(alias=...), DefaultOnError()]``, not an ``Annotated`` inside another: typing
    flattens the nested form to the same object, but builds the inner alias first, for every field of
    every class at import (about 17 us each, 288 fields of the stable build: P2 in docs/performance.md).
    A field named as on the wire has no alias at all (215 ``Field(...)`` calls fewer in the stable build)."""
    fields = _class_fields(ast.parse((GENERATED / package / "models.py").read_text()))
    nested = [
        name
        for name, field in fields.items()
        if isinstance(field.annotation, ast.Subscript) and _is_annotated(field.annotation)
        and isinstance(field.annotation.slice, ast.Tuple) and _is_annotated(field.annotation.slice.elts[0])
    ]  # fmt: skip
    assert nested == []
    same_alias = [
        name
        for name, field in fields.items()
        for call in ast.walk(field.annotation)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Field"
        for keyword in call.keywords
        if keyword.arg == "alias" and isinstance(keyword.value, ast.Constant)
        and keyword.value.value == ast.unparse(field.target)
    ]  # fmt: skip
    assert same_alias == [], "a field named as on the wire needs no alias (one Field(...) less at import)"
    variant = "stable" if package == "acp_bindings" else "unstable"
    path = models(variant).ReadTextFileRequest.model_fields["path"]
    assert path.alias is None and read(variant, "ReadTextFileRequest", {"sessionId": "s", "path": "/a"}).path == "/a"
    meta = models(variant).NewSessionRequest.model_fields["meta"]
    assert meta.alias == "_meta" and [type(rule).__name__ for rule in meta.metadata] == ["DefaultOnError"]


def _class_fields(tree: ast.Module) -> dict[str, ast.AnnAssign]:
    """Every field a class of the module declares, by ``Class.attribute``."""
    return {
        f"{cls.name}.{stmt.target.id}": stmt
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for stmt in cls.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
    }


def _is_annotated(node: ast.expr) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Annotated"


def test_descriptions_become_docstrings() -> None:
    m = models("stable")
    assert "creating a new session" in (m.NewSessionRequest.__doc__ or "")
    assert "working directory" in field_doc(m.NewSessionRequest, "cwd")


def test_unstable_items_are_marked_in_the_unstable_build() -> None:
    u = models("unstable")
    assert "UNSTABLE" in (u.ForkSessionRequest.__doc__ or "")
    assert "UNSTABLE" in field_doc(u.NewSessionRequest, "system_prompt")
    assert "UNSTABLE" not in field_doc(u.NewSessionRequest, "cwd")


def test_round_trip_of_a_typed_construction() -> None:
    m = models("stable")
    req = m.NewSessionRequest(cwd="/w", mcp_servers=[])
    assert wire("stable", "NewSessionRequest", req) == {"cwd": "/w", "mcpServers": []}
    assert TypeAdapter(m.NewSessionRequest).validate_python({"cwd": "/w", "mcpServers": []}) == req


def test_dumps_are_the_wire_with_no_argument() -> None:
    m = models("stable")
    request = m.NewSessionRequest(cwd="/w", mcp_servers=[])
    assert request.model_dump(mode="json") == {"cwd": "/w", "mcpServers": []}
    assert json.loads(request.model_dump_json()) == {"cwd": "/w", "mcpServers": []}
    # an optional property that is not nullable is never written as null (None means absent)
    call = m.ToolCall(tool_call_id="t", title="T", status=None, kind="edit")
    assert call.model_dump(mode="json") == {"toolCallId": "t", "title": "T", "kind": "edit"}
    # a lenient fallback dumps the default it read as: here, no status at all
    read_back = read("stable", "ToolCall", {"toolCallId": "t", "title": "T", "status": None})
    assert read_back.model_dump(mode="json") == {"toolCallId": "t", "title": "T"}
    # defaults that were not on the wire stay off it; arguments still override
    init = read("stable", "InitializeRequest", {"protocolVersion": 1})
    assert init.model_dump(mode="json") == {"protocolVersion": 1}
    assert "clientCapabilities" in init.model_dump(mode="json", exclude_unset=False)
    assert "protocol_version" in init.model_dump(by_alias=False)


@pytest.mark.parametrize(
    ("def_name", "payload"),
    [
        ("Error", {"code": -32603, "message": "m", "data": None}),  # any JSON, null included
        ("ToolCallUpdate", {"toolCallId": "t", "rawInput": None, "rawOutput": None, "status": None}),
    ],
)
def test_a_property_of_any_json_value_keeps_its_null(def_name: str, payload: dict[str, Any]) -> None:
    value = read("stable", def_name, payload)
    assert value.model_dump(mode="json") == payload and json.loads(value.model_dump_json()) == payload


def test_an_envelope_keeps_a_payload_that_no_typed_member_recognises() -> None:
    # params/result may be any ACP payload or an extension's (ExtRequest, ExtResponse: any JSON);
    # an object of which no typed member reads a single member is the extension's, whole
    response = {"id": 1, "result": {"vendorStatus": "ok"}}
    assert read("stable", "ClientResponse", response).model_dump(mode="json") == response
    request = {"id": "a", "method": "_vendor/op", "params": {"x": [1]}}
    assert read("stable", "ClientRequest", request).params == {"x": [1]}
    typed = read("stable", "ClientResponse", {"id": 1, "result": {"outcome": {"outcome": "cancelled"}}})
    assert type(typed.result).__name__ == "RequestPermissionResponse"


def test_generated_files_carry_the_header() -> None:
    for path in sorted(Path(GENERATED).rglob("*.py")):
        head = path.read_text().splitlines()[:3]
        assert head[0].startswith("# Generated by acpgen"), path
        assert head[1].startswith("# schema sha256 ") and "make generate" in head[2], path
