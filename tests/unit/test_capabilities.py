"""Capability gating: the rule table, its checks at generation, and the generated helpers."""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from acpgen.errors import AcpgenError
from acpgen.ir.naming import snake
from acpgen.load.rule_table import load_rules
from acpgen.pipeline import Revision, read_schema_file
from tests.support.bindings import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "capabilities"


def helpers(variant: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGES[variant]}.capabilities")


def models(variant: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGES[variant]}.models")


def advertised(variant: str, side: str, path: str | None, value: Any) -> Any:
    """The side's capabilities model with ``path`` set to ``value`` (and nothing else advertised)."""
    root_class = getattr(models(variant), "AgentCapabilities" if side == "agent" else "ClientCapabilities")
    data: dict[str, Any] = {}
    if path is not None:
        node = data
        *parents, leaf = path.split(".")[1:]
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return root_class.model_validate(data)


def payload_for(rule: Any) -> Any:
    """A params model that uses the rule's subject (built without validation: only the subject matters)."""
    if rule.kind == "method":
        return None
    cls = rule.classes[0]
    if rule.kind == "field":
        return cls.model_construct(**{rule.attr: ["/extra/root"]})
    if rule.kind == "value":
        return cls.model_construct(**{rule.attr: rule.value})
    return cls.model_construct()


def all_rules() -> list[tuple[str, Any]]:
    return [(v, r) for v in ("stable", "unstable") for r in helpers(v).RULES]


@pytest.mark.parametrize(("variant", "rule"), all_rules(), ids=lambda x: x if isinstance(x, str) else x.subject)
def test_truth_table_of_every_rule(variant: str, rule: Any) -> None:
    check = helpers(variant).violations
    side, path = rule.capability.side, rule.capability.path
    method = rule.subject if rule.kind == "method" else "x/y"
    payload = payload_for(rule)
    on = True if rule.capability.presence == "true" else {}
    assert check(side, advertised(variant, side, path, on), method, payload) == []  # advertised
    cases = {"not advertised": advertised(variant, side, None, None), "nothing at all": None}
    if rule.capability.presence == "true":
        cases["advertised false"] = advertised(variant, side, path, False)
    else:
        cases["capability object null"] = advertised(variant, side, path, None)
    for case, caps in cases.items():
        found = check(side, caps, method, payload)
        assert [v.rule for v in found] == [rule], f"{case}: {found}"
        assert found[0].message.endswith(f"needs {path}, which the {side} did not advertise")


def test_each_rule_applies_only_towards_the_side_that_advertises() -> None:
    for variant, rule in all_rules():
        other = "client" if rule.capability.side == "agent" else "agent"
        method = rule.subject if rule.kind == "method" else "x/y"
        assert helpers(variant).violations(other, None, method, payload_for(rule)) == []


@pytest.mark.parametrize(
    ("variant", "subject", "message"),
    [
        (
            "stable",
            "session/load",
            "session/load needs agentCapabilities.loadSession, which the agent did not advertise",
        ),
        (
            "stable",
            "session/resume",
            "session/resume needs agentCapabilities.sessionCapabilities.resume, which the agent did not advertise",
        ),
        (
            "stable",
            "session/close",
            "session/close needs agentCapabilities.sessionCapabilities.close, which the agent did not advertise",
        ),
        (
            "stable",
            "NewSessionRequest.additionalDirectories",
            "NewSessionRequest.additionalDirectories needs "
            "agentCapabilities.sessionCapabilities.additionalDirectories, which the agent did not advertise",
        ),
        (
            "stable",
            "McpServer[http]",
            "McpServer of type http needs agentCapabilities.mcpCapabilities.http, which the agent did not advertise",
        ),
        (
            "stable",
            "McpServer[sse]",
            "McpServer of type sse needs agentCapabilities.mcpCapabilities.sse, which the agent did not advertise",
        ),
        (
            "stable",
            "ContentBlock[image]",
            "ContentBlock of type image needs agentCapabilities.promptCapabilities.image, "
            "which the agent did not advertise",
        ),
        (
            "stable",
            "ContentBlock[audio]",
            "ContentBlock of type audio needs agentCapabilities.promptCapabilities.audio, "
            "which the agent did not advertise",
        ),
        (
            "stable",
            "ContentBlock[resource]",
            "ContentBlock of type resource needs agentCapabilities.promptCapabilities.embeddedContext, "
            "which the agent did not advertise",
        ),
        (
            "stable",
            "fs/read_text_file",
            "fs/read_text_file needs clientCapabilities.fs.readTextFile, which the client did not advertise",
        ),
        (
            "stable",
            "fs/write_text_file",
            "fs/write_text_file needs clientCapabilities.fs.writeTextFile, which the client did not advertise",
        ),
        (
            "stable",
            "terminal/create",
            "terminal/create needs clientCapabilities.terminal, which the client did not advertise",
        ),
        (
            "unstable",
            "session/fork",
            "session/fork needs agentCapabilities.sessionCapabilities.fork, which the agent did not advertise",
        ),
        (
            "unstable",
            "SystemPromptMode=override",
            "SystemPromptMode 'override' needs agentCapabilities.sessionCapabilities.systemPrompt.mode.override, "
            "which the agent did not advertise",
        ),
    ],
)
def test_rules_named_in_the_issue(variant: str, subject: str, message: str) -> None:
    rule = next(r for r in helpers(variant).RULES if r.subject == subject)
    assert rule.message == message


def test_whole_messages_are_checked() -> None:
    m, check = models("stable"), helpers("stable").violations
    prompt = m.PromptRequest.model_validate(
        {
            "sessionId": "s",
            "prompt": [
                {"type": "text", "text": "look"},
                {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                {"type": "resource_link", "name": "a", "uri": "file:///a"},
            ],
        }
    )
    found = check("agent", m.AgentCapabilities(), "session/prompt", prompt)
    assert [v.rule.subject for v in found] == ["ContentBlock[image]"]
    caps = m.AgentCapabilities.model_validate({"promptCapabilities": {"image": True}})
    assert check("agent", caps, "session/prompt", prompt) == []
    new = m.NewSessionRequest.model_validate(
        {"cwd": "/w", "mcpServers": [{"type": "http", "name": "w", "url": "https://x.test", "headers": []}]}
    )
    assert [v.rule.subject for v in check("agent", m.AgentCapabilities(), "session/new", new)] == ["McpServer[http]"]
    stdio = m.NewSessionRequest.model_validate(
        {"cwd": "/w", "mcpServers": [{"name": "s", "command": "x", "args": [], "env": []}]}
    )
    assert check("agent", m.AgentCapabilities(), "session/new", stdio) == []


def test_supports_accessors_cover_every_capability() -> None:
    for variant in ("stable", "unstable"):
        h = helpers(variant)
        for path, capability in h.CAPABILITIES.items():
            accessor = "supports_" + "_".join(
                snake(segment.removesuffix("Capabilities")) for segment in path.split(".")
            )
            assert callable(getattr(h, accessor)), path
            on = True if capability.presence == "true" else {}
            assert getattr(h, accessor)(advertised(variant, capability.side, path, on)) is True
            assert getattr(h, accessor)(None) is False
    h = helpers("stable")
    assert h.supports_agent_load_session(advertised("stable", "agent", "agentCapabilities.loadSession", True))
    assert not h.supports_agent_session_resume(models("stable").AgentCapabilities())


def test_senders_refuse_what_the_peer_did_not_advertise() -> None:
    m = models("stable")
    senders = importlib.import_module("acp_bindings.senders")
    sent: list[str] = []

    class Requester:
        async def request(self, method: str, params: Any = None, *, serializer: Any = None, read: Any = None) -> Any:
            sent.append(method)
            return read({}) if read is not None else {}

        async def notify(self, method: str, params: Any = None, *, serializer: Any = None) -> None:
            sent.append(method)

    agent = senders.AgentSender(Requester(), peer_capabilities=m.AgentCapabilities())
    request = m.LoadSessionRequest(session_id="s", cwd="/w", mcp_servers=[])
    with pytest.raises(helpers("stable").CapabilityError, match=r"session/load needs agentCapabilities\.loadSession"):
        asyncio.run(agent.load_session(request))
    assert sent == []
    agent.peer_capabilities = m.AgentCapabilities(load_session=True)
    asyncio.run(agent.load_session(request))
    unchecked = senders.AgentSender(Requester())
    asyncio.run(unchecked.load_session(request))
    assert sent == ["session/load", "session/load"]


def test_method_table_and_interfaces_carry_the_gates() -> None:
    methods = importlib.import_module("acp_bindings.methods").METHODS
    gates = {(s.side, s.wire): s.capability for s in methods}
    assert gates[("agent", "session/load")] == "agentCapabilities.loadSession"
    assert gates[("client", "terminal/create")] == "clientCapabilities.terminal"
    assert gates[("agent", "session/prompt")] is None
    interfaces = importlib.import_module("acp_bindings.interfaces")
    assert "load_session" not in interfaces.Agent.__abstractmethods__
    assert "prompt" in interfaces.Agent.__abstractmethods__
    assert "read_text_file" not in interfaces.Client.__abstractmethods__


def test_version_negotiation() -> None:
    init = importlib.import_module("acp_bindings.initialization")
    assert init.negotiate_version(1) == 1
    assert init.negotiate_version(7, supported=(1, 2)) == 2
    assert init.negotiate_version(1, supported=(1, 2)) == 1
    assert init.accepts_version(1) and not init.accepts_version(2)


# --- the rule table is checked against the schema at every generation -----------------------------


def fixture_revision(rules: dict[str, Any], *, strict: bool = True) -> Revision:
    schema = read_schema_file(FIXTURE / "schema.json", package="fixture", version="0")
    return Revision(
        stable=schema,
        unstable=None,
        protocol_version=1,
        rules=rules,
        rules_origin="rules.json",
        strict_capabilities=strict,
    )


def fixture_rules() -> dict[str, Any]:
    return copy.deepcopy(load_rules(FIXTURE / "capability-rules.json"))


def test_fixture_rule_table_is_accepted() -> None:
    protocol = fixture_revision(fixture_rules()).protocol("stable")
    assert [r.subject for r in protocol.rules] == [
        "session/load",
        "PromptRequest.additionalDirectories",
        "ContentBlock[image]",
        "fs/read_text_file",
    ]
    assert dict(protocol.informational)["clientCapabilities.telemetry"].startswith("advertised")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda r: r["rules"][0].update(method="session/frobnicate"),
            "rule subject method 'session/frobnicate' does not exist",
        ),
        (lambda r: r["rules"][1].update(field="PromptRequest.extraDirs"), "does not exist in the schema"),
        (lambda r: r["rules"][2].update(variant="ContentBlock[video]"), "does not exist in the schema"),
        (lambda r: r["rules"][0].update(needs="agentCapabilities.loadSessions"), "which the schema does not have"),
        (lambda r: r["rules"][0].update(side="client"), 'Set "side": "agent"'),
        (lambda r: r["rules"][0].update(presence="present"), '"presence": "true"'),
        (lambda r: r["rules"].append({"method": "session/load"}), "which the schema does not have"),
        (lambda r: r["rules"].append({"method": "session/load", "field": "X.y", "needs": "x"}), "exactly one subject"),
    ],
)
def test_broken_rule_fails_generation(change: Any, expected: str) -> None:
    rules = fixture_rules()
    change(rules)
    with pytest.raises(AcpgenError) as caught:
        fixture_revision(rules).protocol("stable")
    assert expected in str(caught.value)
    assert "rules.json#/rules/" in caught.value.problems[0].where


def test_capability_without_a_rule_fails_in_strict_mode_and_is_reported_otherwise() -> None:
    rules = fixture_rules()
    del rules["informational"]["clientCapabilities.telemetry"]
    with pytest.raises(AcpgenError, match=r"capability 'clientCapabilities\.telemetry' gates nothing"):
        fixture_revision(rules).protocol("stable")
    protocol = fixture_revision(rules, strict=False).protocol("stable")
    assert protocol.ungated == ("clientCapabilities.telemetry",)


def test_pinned_rule_table_is_strict_clean_and_covers_every_leaf() -> None:
    from tests.generated.test_stability import revision

    table = load_rules(ROOT / "schema" / "capability-rules.json")
    pinned = Revision(
        stable=revision().stable,
        unstable=revision().unstable,
        protocol_version=1,
        rules=table,
        strict_capabilities=True,
    )
    for variant in ("stable", "unstable"):
        protocol = pinned.protocol(variant)  # raises if any rule is broken or any leaf is ungated
        leaves = {c.path for c in protocol.capabilities if c.leaf}
        assert leaves <= {r.capability.path for r in protocol.rules} | {p for p, _ in protocol.informational}
    assert json.loads((ROOT / "schema" / "capability-rules.json").read_text())["rules"]


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_only_payloads_that_can_hold_a_gated_model_are_walked(variant: str) -> None:
    caps, m = helpers(variant), models(variant)
    book = caps._BOOK
    assert book._may_hold(m.PromptRequest, "agent")  # a prompt may hold an image block
    assert book._may_hold(m.NewSessionRequest, "agent")  # MCP servers over http
    assert not book._may_hold(m.SetSessionModeRequest, "agent")  # nothing in it is gated
    for rule in caps.RULES:  # every class a rule gates is found from itself
        for cls in rule.classes:
            assert book._may_hold(cls, rule.capability.side)


def _exhaustive(book: Any, peer: str, caps: Any, method: str, payload: Any) -> list[Any]:
    """Every rule broken, found by walking every model, list and dict of ``payload`` in the order it
    is written and trying every rule of ``peer`` on every model: what the check's walk, which follows
    only the fields that can hold a gated model, must find."""
    from pydantic import BaseModel

    from acpgen.runtime.connection.capabilities import _uses

    found = [r for r in book._by_method.get((peer, method), ()) if not book.supports(caps, r.capability.path)]

    def walk(value: Any) -> None:
        if isinstance(value, BaseModel):
            for rule in book._by_class[peer].get(type(value), ()):
                if _uses(rule, value) and not book.supports(caps, rule.capability.path):
                    found.append(rule)
            for name in type(value).model_fields:
                if name in value.__dict__:
                    walk(value.__dict__[name])
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    walk(payload)
    return list(dict.fromkeys(found))


BLOCKS = [
    {"type": "image", "data": "aGk=", "mimeType": "image/png"},
    {"type": "text", "text": "look"},
    {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
    {"type": "resource", "resource": {"uri": "file:///a", "text": "a"}},
    {"type": "resource_link", "name": "a", "uri": "file:///a"},
]
SERVERS = [
    {"type": "sse", "name": "s", "url": "https://x.test", "headers": []},
    {"name": "s", "command": "x", "args": [], "env": []},
    {"type": "http", "name": "w", "url": "https://x.test", "headers": []},
]


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_the_walk_finds_what_an_exhaustive_walk_finds_in_the_same_order(variant: str) -> None:
    m, caps = models(variant), helpers(variant)
    book = caps._BOOK
    payloads = [("session/prompt", m.PromptRequest.model_validate({"sessionId": "s", "prompt": []}))]
    for start in range(len(BLOCKS)):
        for size in (1, 2, 5):
            chosen = (BLOCKS[start:] + BLOCKS[:start])[:size]
            payloads.append(("session/prompt", m.PromptRequest.model_validate({"sessionId": "s", "prompt": chosen})))
    for start in range(len(SERVERS)):
        chosen = SERVERS[start:] + SERVERS[:start]
        new = {"cwd": "/w", "mcpServers": chosen, "additionalDirectories": ["/x"]}
        payloads.append(("session/new", m.NewSessionRequest.model_validate(new)))
        payloads.append(("session/new", m.NewSessionRequest.model_validate({"cwd": "/w", "mcpServers": chosen[:1]})))
    payloads.append(
        ("session/load", m.LoadSessionRequest.model_validate({"sessionId": "s", "cwd": "/w", "mcpServers": SERVERS}))
    )
    payloads.append(("session/set_mode", m.SetSessionModeRequest.model_validate({"sessionId": "s", "modeId": "m"})))
    advertised_sets = [
        None,
        m.AgentCapabilities(),
        m.AgentCapabilities.model_validate({"promptCapabilities": {"image": True, "audio": True}}),
        m.AgentCapabilities.model_validate(
            {"promptCapabilities": {"embeddedContext": True}, "mcpCapabilities": {"http": True}, "loadSession": True}
        ),
    ]
    # towards the client: gated models held in a field directly, and in lists inside them
    notice = {"sessionUpdate": "notice", "severity": "info", "title": "t"}
    option = {"type": "boolean", "id": "o", "name": "o", "currentValue": True}
    options = {"sessionUpdate": "config_option_update", "configOptions": [option, option]}
    chunk = {"sessionUpdate": "agent_message_chunk", "content": BLOCKS[0]}
    to_client = [
        ("session/update", m.SessionNotification.model_validate({"sessionId": "s", "update": update}))
        for update in (notice, options, chunk)
    ]
    client_sets = [None, m.ClientCapabilities()]
    checked = passed = 0
    for peer, cases, sets in (("agent", payloads, advertised_sets), ("client", to_client, client_sets)):
        for method, payload in cases:
            for advertised_caps in sets:
                expected = _exhaustive(book, peer, advertised_caps, method, payload)
                assert [v.rule for v in caps.violations(peer, advertised_caps, method, payload)] == expected
                checked += bool(expected)
                # require (its look at once, then the walk) refuses exactly these, in this order
                try:
                    caps.require(peer, advertised_caps, method, payload)
                except caps.CapabilityError as error:
                    assert [v.rule for v in error.violations] == expected
                else:
                    assert expected == []
                    passed += 1
    assert checked > 20  # most cases break rules: the comparison is not of empty lists
    assert passed > 10  # and many pass: require's look at once is not left untried
