"""The scenarios that drive an agent, each in a fresh process of its own (run by
:mod:`.runner`). Each records the checks of the requirements it judges; where the
issue is silent they do what acp-tck does (its cancel race, its quiet periods), and
where acp-tck and the spec disagree they follow the spec (the unsupported-version
answer must be a version the agent speaks, asked of a fresh process; a trace check
with nothing to judge is SKIPPED, not PASS)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .peer import PeerExited
from .runner import Aborted
from .trace_check import TURN_CONTENT

if TYPE_CHECKING:
    from .runner import Scenario

UNSUPPORTED_VERSION = 65535
STOP_REASONS_OK = "the models read it"
MCP_STUB = (
    "import json,sys\n"
    "for line in sys.stdin:\n"
    "    try: m=json.loads(line)\n"
    "    except ValueError: continue\n"
    "    if 'id' not in m or 'method' not in m: continue\n"
    "    r={'initialize':{'protocolVersion':'2024-11-05','capabilities':{'tools':{}},"
    "'serverInfo':{'name':'acp-conformance-stub','version':'1'}},"
    "'tools/list':{'tools':[]}}.get(m['method'],{})\n"
    "    r=json.dumps({'jsonrpc':'2.0','id':m['id'],'result':r})\n"
    "    sys.stdout.write(r+'\\n'); sys.stdout.flush()\n"
)


def _kind(message: dict[str, Any]) -> Any:
    return ((message.get("params") or {}).get("update") or {}).get("sessionUpdate")


def _error_code(answer: dict[str, Any] | None) -> int | None:
    error = answer.get("error") if answer else None
    return (
        error.get("code")
        if isinstance(error, dict) and isinstance(error.get("code"), int)
        else None
    )


def _result(answer: dict[str, Any] | None) -> dict[str, Any] | None:
    result = answer.get("result") if answer else None
    return result if isinstance(result, dict) else None


def _describe(answer: dict[str, Any] | None) -> str:
    if answer is None:
        return "no answer within the timeout"
    if "error" in answer:
        return f"error {answer['error']}"
    return f"result {answer.get('result')}"


# --- initialize


def initialize(s: Scenario) -> None:
    answer = s.driver.request(
        "initialize", s.init_params(), timeout=s.options.startup_timeout
    )
    result = _result(answer)
    s.handler("initialize", answer)
    if result is None:
        s.fail("ACP-AGENT-INIT-001", f"initialize: {_describe(answer)}")
        return
    version = result.get("protocolVersion")
    if type(version) is not int:
        s.fail("ACP-AGENT-INIT-001", f"protocolVersion is not an integer: {version!r}")
    elif s.judged_ok("message-result", "initialize"):
        s.passed("ACP-AGENT-INIT-001", f"protocolVersion {version}")
    else:
        s.fail(
            "ACP-AGENT-INIT-001",
            "the answer is not an InitializeResponse (see the RESULT requirement)",
        )
    if version == s.kit.protocol_version:
        s.passed("ACP-AGENT-INIT-002")
    else:
        s.run.blocked_by_version = True
        s.fail(
            "ACP-AGENT-INIT-002",
            f"asked for {s.kit.protocol_version}, answered {version!r}",
        )
    info = result.get("agentInfo")
    if isinstance(info, dict) and info.get("name") and info.get("version"):
        s.passed("ACP-AGENT-INIT-004", f"{info.get('name')} {info.get('version')}")
    else:
        s.fail("ACP-AGENT-INIT-004", "no agentInfo with name and version")
    methods = result.get("authMethods") or []
    ids = [m.get("id") for m in methods if isinstance(m, dict)]
    if len(ids) == len(set(ids)):
        s.passed("ACP-AGENT-AUTH-001") if ids else s.skipped(
            "ACP-AGENT-AUTH-001", "no authMethods"
        )
    else:
        s.fail("ACP-AGENT-AUTH-001", f"authMethods ids repeat: {ids}")
    sessions = (result.get("agentCapabilities") or {}).get("sessionCapabilities") or {}
    if "archive" in s.kit_capability_paths():
        if sessions.get("archive") is not None and sessions.get("list") is None:
            s.fail("ACP-AGENT-CAPS-001", "archive advertised without list")
        else:
            s.passed("ACP-AGENT-CAPS-001")


def initialize_minimal(s: Scenario) -> None:
    answer = s.driver.request(
        "initialize",
        {"protocolVersion": s.kit.protocol_version},
        timeout=s.options.startup_timeout,
    )
    s.check(
        "ACP-AGENT-INIT-005",
        _result(answer) is not None,
        f"initialize with protocolVersion only: {_describe(answer)}",
    )


def initialize_unsupported(s: Scenario) -> None:
    params = dict(s.init_params(), protocolVersion=UNSUPPORTED_VERSION)
    answer = s.driver.request("initialize", params, timeout=s.options.startup_timeout)
    version = (_result(answer) or {}).get("protocolVersion")
    if type(version) is not int:
        s.fail(
            "ACP-AGENT-INIT-003",
            f"initialize with version {UNSUPPORTED_VERSION}: {_describe(answer)}",
        )
        return
    if version == UNSUPPORTED_VERSION:
        s.fail(
            "ACP-AGENT-INIT-003",
            f"the unsupported version {UNSUPPORTED_VERSION} was echoed",
        )
        return
    again = s.fresh().request(
        "initialize",
        dict(s.init_params(), protocolVersion=version),
        timeout=s.options.startup_timeout,
    )
    spoken = (_result(again) or {}).get("protocolVersion")
    if spoken == version:
        s.passed(
            "ACP-AGENT-INIT-003", f"answered {version}, which a fresh process accepts"
        )
    else:
        s.fail(
            "ACP-AGENT-INIT-003",
            f"answered {version}, but asked for {version} a fresh process answers "
            f"{spoken!r}",
        )


def authenticate(s: Scenario) -> None:
    """Where the agent advertised authMethods: an id it never advertised is refused;
    the advertised one (``--auth-method``) is accepted and lets ``session/new`` in."""
    if not s.run.auth_methods:
        return
    answer = s.driver.request(
        "initialize", s.init_params(), timeout=s.options.startup_timeout
    )
    if _result(answer) is None:
        raise Aborted(f"initialize: {_describe(answer)}")
    advertised = {m.get("id") for m in s.run.auth_methods if isinstance(m, dict)}
    unknown = "acp-conformance-unadvertised-method"
    while unknown in advertised:
        unknown += "-x"
    stranger = s.driver.request("authenticate", {"methodId": unknown})
    s.check(
        "ACP-AGENT-AUTH-005",
        stranger is not None and "error" in stranger,
        f"authenticate with {unknown!r}, an id the agent never advertised: "
        f"{_describe(stranger)}",
    )
    if not s.options.auth_method:
        s.skip("ACP-AGENT-AUTH-002", "give --auth-method to authenticate")
        return
    s.authenticate()
    after = s.new_session_answer()
    s.check(
        "ACP-AGENT-AUTH-002",
        _error_code(after) != -32000,
        f"session/new after authenticate with {s.options.auth_method!r}: "
        f"{_describe(after)}",
    )


# --- sessions


def session_new(s: Scenario) -> None:
    if s.handshake() is None:
        return
    first = s.new_session_answer()
    s.handler("session/new", first)
    one = (_result(first) or {}).get("sessionId")
    if (
        _error_code(first) == -32000
        and s.run.auth_methods
        and not s.options.auth_method
    ):
        s.run.blocked_by_auth = True
        s.skip(
            "ACP-AGENT-SESSION-001",
            "AUTH-GATED: session/new needs authentication; give --auth-method",
        )
        return
    if _error_code(first) == -32000 and not s.run.auth_methods:
        s.fail(
            "ACP-AGENT-AUTH-003",
            "session/new refused with -32000 although no authMethods were listed",
        )
    elif first is not None:
        s.passed("ACP-AGENT-AUTH-003")
    if _error_code(first) == -32000 and s.options.auth_method and s.run.auth_methods:
        s.fail(
            "ACP-AGENT-AUTH-002",
            f"session/new refused with auth_required (-32000) after authenticate "
            f"with {s.options.auth_method!r}",
        )
    if not isinstance(one, str) or not one:
        s.fail("ACP-AGENT-SESSION-001", f"session/new: {_describe(first)}")
        return
    s.passed("ACP-AGENT-SESSION-001", f"session id {one!r}")
    two = (_result(s.new_session_answer()) or {}).get("sessionId")
    if isinstance(two, str) and two and two != one:
        s.passed("ACP-AGENT-SESSION-002", f"{one!r}, {two!r}")
    else:
        s.fail(
            "ACP-AGENT-SESSION-002",
            f"two session/new calls answered {one!r} and {two!r}",
        )
    _modes_and_options(s, one, _result(first) or {})


def _modes_and_options(s: Scenario, session: str, result: dict[str, Any]) -> None:
    modes = result.get("modes")
    if isinstance(modes, dict) and modes.get("currentModeId"):
        s.run.handed_out.add("SessionModeId")
        _modes(s, session, modes)
    options = result.get("configOptions")
    if isinstance(options, list) and options:
        s.run.handed_out.add("SessionConfigId")
        _config_options(s, session, options)


def _modes(s: Scenario, session: str, modes: dict[str, Any]) -> None:
    offered = [
        m.get("id") for m in modes.get("availableModes") or [] if isinstance(m, dict)
    ]
    current = modes.get("currentModeId")
    s.check(
        "ACP-AGENT-MODES-001",
        current in offered,
        f"currentModeId {current!r} is not one of availableModes {offered!r}",
    )
    other = next((m for m in offered if m != current), current)
    count = len(s.driver.received)
    answer = s.driver.request(
        "session/set_mode", {"sessionId": session, "modeId": other}
    )
    s.check(
        s.kit.derived("required-handler", "session/set_mode"),
        _error_code(answer) != -32601 and answer is not None,
        f"session/set_mode: {_describe(answer)}",
    )
    if _result(answer) is None:
        s.fail(
            "ACP-AGENT-MODES-002", f"session/set_mode to {other!r}: {_describe(answer)}"
        )
        return
    s.driver.pump(s.quiet)
    named = [
        ((r.message.get("params") or {}).get("update") or {}).get("currentModeId")
        for r in s.driver.received[count:]
        if _kind(r.message) == "current_mode_update"
    ]
    stray = [m for m in named if m not in offered]
    s.check(
        "ACP-AGENT-MODES-002",
        not stray,
        f"after session/set_mode to {other!r}, a current_mode_update names "
        f"{stray[0] if stray else None!r}, not one of {offered!r}",
    )


def _choices(option: dict[str, Any]) -> list[Any]:
    """The values a select option offers (its groups flattened)."""
    found: list[Any] = []
    for item in option.get("options") or []:
        if isinstance(item, dict) and "group" in item:
            found += [
                o.get("value") for o in item.get("options") or [] if isinstance(o, dict)
            ]
        elif isinstance(item, dict):
            found.append(item.get("value"))
    return found


def _config_options(s: Scenario, session: str, options: list[Any]) -> None:
    bad = []
    for o in options:
        if not isinstance(o, dict):
            continue
        kind, value = o.get("type"), o.get("currentValue")
        if kind == "select" and value not in _choices(o):
            bad.append(f"{o.get('id')!r}: {value!r} is not one of {_choices(o)!r}")
        elif kind == "boolean" and not isinstance(value, bool):
            bad.append(f"{o.get('id')!r}: {value!r} is not a boolean")
    s.check("ACP-AGENT-CONFIG-001", not bad, "; ".join(bad))
    option = next(
        (
            o
            for o in options
            if isinstance(o, dict) and o.get("type") in ("select", "boolean")
        ),
        None,
    )
    if option is None:
        return
    params: dict[str, Any] = {"sessionId": session, "configId": option.get("id")}
    if option.get("type") == "boolean":
        wanted: Any = not option.get("currentValue")
        params.update(type="boolean", value=wanted)
    else:
        choices = _choices(option)
        wanted = next(
            (c for c in choices if c != option.get("currentValue")),
            option.get("currentValue"),
        )
        params["value"] = wanted
    answer = s.driver.request("session/set_config_option", params)
    s.check(
        s.kit.derived("required-handler", "session/set_config_option"),
        _error_code(answer) != -32601 and answer is not None,
        f"session/set_config_option: {_describe(answer)}",
    )
    after = (_result(answer) or {}).get("configOptions")
    if not isinstance(after, list):
        s.fail(
            "ACP-AGENT-CONFIG-002", f"session/set_config_option: {_describe(answer)}"
        )
        return
    now = {o.get("id"): o.get("currentValue") for o in after if isinstance(o, dict)}
    missing = [
        o.get("id") for o in options if isinstance(o, dict) and o.get("id") not in now
    ]
    s.check(
        "ACP-AGENT-CONFIG-002",
        not missing and now.get(option.get("id")) == wanted,
        f"set {option.get('id')!r} to {wanted!r}: the answer lacks {missing!r}"
        if missing
        else f"set {option.get('id')!r} to {wanted!r}: the answer holds "
        f"{now.get(option.get('id'))!r}",
    )


def mcp_stdio(s: Scenario) -> None:
    if s.handshake() is None:
        return
    server = {
        "name": "acp-conformance-stub",
        "command": sys.executable,
        "args": ["-c", MCP_STUB],
        "env": [],
    }
    answer = s.driver.request("session/new", {"cwd": s.cwd, "mcpServers": [server]})
    if isinstance((_result(answer) or {}).get("sessionId"), str):
        s.passed(
            "ACP-AGENT-SESSION-004",
            "session/new with a stdio MCP server answered with a session",
        )
    else:
        s.fail(
            "ACP-AGENT-SESSION-004",
            f"session/new with a stdio MCP server: {_describe(answer)}",
        )


# --- prompt turns


def prompt_text(s: Scenario) -> None:
    session = s.session()
    if session is None:
        return
    sent = time.monotonic()
    answer = s.prompt(
        session, [{"type": "text", "text": "Hello, conformance kit: héllo ✓"}]
    )
    s.handler("session/prompt", answer)
    reason = (_result(answer) or {}).get("stopReason")
    if reason is None:
        s.fail("ACP-AGENT-PROMPT-001", f"session/prompt: {_describe(answer)}")
        return
    if s.judged_ok("message-result", "session/prompt"):
        s.passed("ACP-AGENT-PROMPT-001", f"stopReason {reason!r}")
    else:
        s.fail(
            "ACP-AGENT-PROMPT-001", f"stopReason {reason!r} is not one the schema lists"
        )
    answered = s.driver.answers_time(answer)
    s.driver.pump(s.quiet)
    updates = s.driver.updates(session, since=sent)
    before = [u for u in updates if u.t <= answered]
    after = [u for u in updates if u.t > answered and _kind(u.message) in TURN_CONTENT]
    valid = s.judged_ok("message-params", "session/update")
    elsewhere = [
        (r.message.get("params") or {}).get("sessionId")
        for r in s.driver.received
        if r.message.get("method") == "session/update"
        and sent <= r.t <= answered
        and (r.message.get("params") or {}).get("sessionId") != session
    ]
    if elsewhere:
        s.fail(
            "ACP-AGENT-PROMPT-002",
            f"during the turn of session {session!r}, a session/update names "
            f"{elsewhere[0]!r}, a session the agent did not hand out here",
        )
    elif not updates:
        s.skip("ACP-AGENT-PROMPT-002", "the turn sent no session/update")
    elif valid:
        s.passed(
            "ACP-AGENT-PROMPT-002", f"{len(before)} updates, each naming the session"
        )
    else:
        s.fail(
            "ACP-AGENT-PROMPT-002",
            "an update the models do not read (see the PARAMS requirement)",
        )
    if after:
        s.fail(
            "ACP-AGENT-PROMPT-004",
            f"{len(after)} session/update after the turn's answer",
        )
    else:
        s.passed(
            "ACP-AGENT-PROMPT-004", f"none within {s.quiet:.1f} s after the answer"
        )
    _tool_calls(s, [u.message for u in before])


def _tool_calls(s: Scenario, updates: list[dict[str, Any]]) -> None:
    announced: set[Any] = set()
    seen = False
    for message in updates:
        update = message["params"].get("update") or {}
        kind, call = update.get("sessionUpdate"), update.get("toolCallId")
        if kind == "tool_call":
            seen = True
            announced.add(call)
        elif kind == "tool_call_update":
            seen = True
            if call not in announced:
                s.fail(
                    "ACP-AGENT-PROMPT-005",
                    f"tool call {call!r} updated before it was announced",
                )
                return
    if seen:
        s.passed("ACP-AGENT-PROMPT-005")
    else:
        s.skip("ACP-AGENT-PROMPT-005", "the turn made no tool call")


def prompt_meta(s: Scenario) -> None:
    """A prompt whose params and content block carry ``_meta`` (a W3C trace key,
    nested objects): processed like the same prompt without them."""
    session = s.session()
    if session is None:
        return
    meta = {
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "acp-conformance": {"nested": [1, {"deep": None}], "flag": True},
    }
    block = {"type": "text", "text": "A prompt carrying _meta.", "_meta": meta}
    answer = s.driver.request(
        "session/prompt", {"sessionId": session, "prompt": [block], "_meta": meta}
    )
    s.check(
        "ACP-PEER-EXT-003",
        (_result(answer) or {}).get("stopReason") is not None,
        f"a prompt carrying _meta: {_describe(answer)}",
    )


def unknown_session(s: Scenario) -> None:
    """What a prompt for a session the agent never handed out gets (recorded: v1
    names no error code; it must still be answered)."""
    if s.handshake() is None:
        return
    answer = s.prompt(
        "acp-conformance-no-such-session", [{"type": "text", "text": "Anyone there?"}]
    )
    if answer is not None:
        s.passed("ACP-AGENT-SESSION-003", f"answered {_describe(answer)}")


def prompt_resource_link(s: Scenario) -> None:
    session = s.session()
    if session is None:
        return
    link = {
        "type": "resource_link",
        "uri": "file:///tmp/acp-conformance.txt",
        "name": "acp-conformance.txt",
    }
    answer = s.prompt(session, [{"type": "text", "text": "Look at this file."}, link])
    s.check(
        "ACP-AGENT-PROMPT-003",
        (_result(answer) or {}).get("stopReason") is not None,
        f"a prompt with a resource_link: {_describe(answer)}",
    )


def prompt_content(s: Scenario) -> None:
    """Every content type the agent advertised beyond the baseline, in a prompt."""
    blocks: dict[str, dict[str, Any]] = {
        "image": {"type": "image", "mimeType": "image/png", "data": _PNG},
        "audio": {"type": "audio", "mimeType": "audio/wav", "data": _WAV},
        "resource": {
            "type": "resource",
            "resource": {
                "uri": "file:///tmp/acp-conformance.txt",
                "text": "hello",
                "mimeType": "text/plain",
            },
        },
    }
    wanted = [
        (tag, s.kit.derived("capability-honor", f"ContentBlock[{tag}]"))
        for tag in blocks
    ]
    wanted = [(tag, rid) for tag, rid in wanted if rid and s.applies(rid)]
    if not wanted:
        return
    session = s.session()
    if session is None:
        return
    for tag, rid in wanted:
        answer = s.prompt(
            session, [{"type": "text", "text": f"A {tag} block follows."}, blocks[tag]]
        )
        code = _error_code(answer)
        s.check(
            rid,
            (_result(answer) or {}).get("stopReason") is not None
            and code not in (-32601, -32602),
            f"a prompt with a {tag} block: {_describe(answer)}",
        )


_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
_WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="


# --- cancellation


def cancel(s: Scenario) -> None:
    session = s.session()
    if session is None:
        return
    key = s.driver.start(
        "session/prompt",
        {
            "sessionId": session,
            "prompt": [{"type": "text", "text": s.options.cancel_prompt}],
        },
    )
    trigger = time.monotonic() + 0.5
    while key not in s.driver.answers and time.monotonic() < trigger:
        got = s.driver.step(trigger - time.monotonic())
        if got is not None and got.message.get("method") == "session/update":
            break
    s.driver.pump(
        min(max(s.options.timeout / 50, 0.05), 0.5)
    ) if key not in s.driver.answers else None
    if key in s.driver.answers:
        reason = (_result(s.driver.answers[key].message) or {}).get("stopReason")
        s.skip(
            "ACP-AGENT-CANCEL-001",
            f"the turn ended ({reason!r}) before a cancel could be sent: give a "
            "longer --cancel-prompt",
        )
        s.skip("ACP-AGENT-CANCEL-002", "the cancel could not land")
        return
    s.driver.cancelled.add(session)
    s.driver.notify("session/cancel", {"sessionId": session})
    cancelled_at = time.monotonic()
    answer = s.driver.wait(key)
    if answer is None:
        s.fail("ACP-AGENT-CANCEL-001", "no answer to the prompt after session/cancel")
        return
    answered = s.driver.answers[key].t
    reason = (_result(answer) or {}).get("stopReason")
    if reason == "cancelled":
        s.passed(
            "ACP-AGENT-CANCEL-001",
            f"answered cancelled {answered - cancelled_at:.2f} s after the cancel",
        )
    elif reason is not None and answered - cancelled_at <= s.quiet:
        s.skip(
            "ACP-AGENT-CANCEL-001",
            f"answered {reason!r} {answered - cancelled_at:.2f} s after the cancel: "
            "it may have finished first",
        )
        s.skip("ACP-AGENT-CANCEL-002", "the cancel may not have landed")
        return
    else:
        s.fail(
            "ACP-AGENT-CANCEL-001",
            f"after session/cancel the turn answered {_describe(answer)}",
        )
        if reason is None:
            s.skip(
                "ACP-AGENT-CANCEL-002",
                "the turn answered with an error (judged by ACP-AGENT-CANCEL-001)",
            )
            return
    s.driver.pump(s.quiet)
    late = s.driver.updates(session, since=answered + 1e-9)
    if late:
        s.fail(
            "ACP-AGENT-CANCEL-002",
            f"{len(late)} session/update after the cancelled turn's answer",
        )
    else:
        s.passed("ACP-AGENT-CANCEL-002", f"none within {s.quiet:.1f} s")


def cancel_request(s: Scenario) -> None:
    session = s.session()
    if session is None:
        return
    key = s.driver.start(
        "session/prompt",
        {
            "sessionId": session,
            "prompt": [{"type": "text", "text": s.options.cancel_prompt}],
        },
    )
    s.driver.notify("$/cancel_request", {"requestId": s.driver.id_of(key)})
    answer = s.driver.wait(key)
    code = _error_code(answer)
    if answer is not None and ("result" in answer or code is not None):
        s.passed(
            "ACP-PEER-CANCELREQ-001",
            f"answered with {'a result' if 'result' in answer else f'error {code}'}",
        )
    else:
        s.fail(
            "ACP-PEER-CANCELREQ-001",
            "the request was not answered after $/cancel_request",
        )
    s.driver.notify(
        "$/cancel_request", {"requestId": "acp-conformance-no-such-request"}
    )
    after = s.driver.request("session/new", s.new_session_params())
    usable = isinstance((_result(after) or {}).get("sessionId"), str)
    s.check(
        s.kit.derived("required-handler", "$/cancel_request"),
        usable,
        f"after $/cancel_request: {_describe(after)}",
    )


# --- notifications, unknown methods, JSON-RPC hygiene


def notifications(s: Scenario) -> None:
    session = s.session()
    if session is None:
        return
    count = len(s.driver.received)
    s.driver.notify("session/cancel", {"sessionId": session})
    s.driver.notify("acp_conformance/unknown_notification", {"x": 1})
    s.driver.notify("_acp_conformance/unknown_notification", {"x": 1})
    s.driver.pump(s.quiet)
    answered = [r for r in s.driver.received[count:] if "method" not in r.message]
    if answered:
        s.fail(
            "ACP-PEER-RPC-004", f"a notification was answered: {answered[0].message}"
        )
    else:
        s.passed("ACP-PEER-RPC-004", f"no answer within {s.quiet:.1f} s")
    after = s.driver.request("session/new", s.new_session_params())
    alive = isinstance((_result(after) or {}).get("sessionId"), str)
    s.check(
        s.kit.derived("required-handler", "session/cancel"),
        alive and not answered,
        f"after an idle session/cancel: {_describe(after)}",
    )
    s.check(
        "ACP-AGENT-CANCEL-003",
        alive,
        f"after an idle session/cancel: {_describe(after)}",
    )
    s.check(
        "ACP-PEER-EXT-002",
        alive and not answered,
        f"after unknown notifications: {_describe(after)}",
    )


def unknown_methods(s: Scenario) -> None:
    if s.handshake() is None:
        return
    plain = s.driver.request("acp_conformance/no_such_method", {})
    ext = s.driver.request("_acp_conformance/no_such_method", {})
    if ext is not None and ("result" in ext or _error_code(ext) is not None):
        s.passed("ACP-PEER-EXT-001", _describe(ext))
    else:
        s.fail("ACP-PEER-EXT-001", f"a `_` request: {_describe(ext)}")
    codes = (_error_code(plain), _error_code(ext))
    s.check(
        "ACP-PEER-RPC-006",
        codes == (-32601, -32601),
        f"unknown request answered {_describe(plain)}; `_` request answered "
        f"{_describe(ext)}",
    )
    after = s.driver.request("session/new", s.new_session_params())
    s.check(
        "ACP-PEER-RPC-010",
        isinstance((_result(after) or {}).get("sessionId"), str),
        f"after erroneous requests: {_describe(after)}",
    )


def malformed(s: Scenario) -> None:
    if s.options.url is not None:
        for rid in ("ACP-PEER-RPC-007", "ACP-PEER-RPC-008", "ACP-PEER-RPC-009"):
            s.skip(
                rid, "over --url the kit's transport frames every message: not checked"
            )
        return
    if s.handshake() is None:
        return
    for data, code, rid in (
        (b"this is not json {\n", -32700, "ACP-PEER-RPC-007"),
        (b'{"hello": "world"}\n', -32600, "ACP-PEER-RPC-008"),
    ):
        count = len(s.driver.received)
        s.driver.raw(data)
        s.driver.pump(s.quiet)
        answers = [
            r.message for r in s.driver.received[count:] if "method" not in r.message
        ]
        if not answers:
            s.fail(
                rid, f"no answer to {data.strip().decode()!r} (expected error {code})"
            )
            continue
        got = answers[0]
        s.check(
            rid, _error_code(got) == code, f"{data.strip().decode()!r} answered {got}"
        )
        s.check(
            "ACP-PEER-RPC-009",
            got.get("id", "absent") is None,
            f"answer to {data.strip().decode()!r} has id {got.get('id', 'absent')!r}, "
            "not null",
        )
    after = s.driver.request("session/new", s.new_session_params())
    s.check(
        "ACP-PEER-RPC-010",
        isinstance((_result(after) or {}).get("sessionId"), str),
        f"after malformed lines: {_describe(after)}",
    )


def ids(s: Scenario) -> None:
    wanted = ["ïd-1 ✓", 0, 9007199254740991, -7, ""]
    answer = s.driver.request(
        "initialize", s.init_params(), rid=wanted[0], timeout=s.options.startup_timeout
    )
    if answer is None:
        s.fail("ACP-PEER-RPC-001", f"no answer to initialize with id {wanted[0]!r}")
        return
    s.authenticate()
    for rid in wanted[1:]:
        s.driver.request("session/new", s.new_session_params(), rid=rid)
    bad = [rid for rid in wanted if s.driver.answer_for(rid) is None]
    if bad:
        s.fail("ACP-PEER-RPC-001", f"no answer carrying exactly the id {bad[0]!r}")
    else:
        s.passed("ACP-PEER-RPC-001", f"ids {wanted!r} echoed exactly")
    # id null: the schema's RequestId allows it, JSON-RPC discourages it (SDKs differ:
    # ADVISORY), so it is not waited on as the kit's own request (no RPC-005 check)
    count = len(s.driver.received)
    params = s.new_session_params()
    s.driver.send(
        {"jsonrpc": "2.0", "id": None, "method": "session/new", "params": params}
    )
    deadline = time.monotonic() + s.options.timeout
    null = None
    while null is None and (left := deadline - time.monotonic()) > 0:
        s.driver.step(left)
        null = next(
            (
                r.message
                for r in s.driver.received[count:]
                if "method" not in r.message and r.message.get("id", 0) is None
            ),
            None,
        )
    s.check(
        "ACP-PEER-RPC-002",
        null is not None,
        f"a session/new with id null got no answer with id null within "
        f"{s.options.timeout} s",
    )


# --- advertised capabilities


def load(s: Scenario) -> None:
    if not s.applies("ACP-AGENT-LOAD-001"):
        return
    session = s.session()
    if session is None:
        return
    s.prompt(session, [{"type": "text", "text": "Remember this turn."}])
    s.driver.pump(s.quiet)
    count = len(s.driver.received)
    key = s.driver.start(
        "session/load", {"sessionId": session, "cwd": s.cwd, "mcpServers": []}
    )
    answer = s.driver.wait(key)
    honor = s.kit.derived("capability-honor", "session/load")
    s.check(
        honor,
        answer is not None and _error_code(answer) != -32601,
        f"session/load: {_describe(answer)}",
    )
    if _result(answer) is None:
        s.fail("ACP-AGENT-LOAD-001", f"session/load: {_describe(answer)}")
        return
    s.passed("ACP-AGENT-LOAD-001")
    answered = s.driver.answers[key].t
    s.driver.pump(s.quiet)
    replay = [
        r
        for r in s.driver.received[count:]
        if r.message.get("method") == "session/update"
    ]
    before = [r for r in replay if r.t <= answered]
    after = [r for r in replay if r.t > answered]
    if not before:
        s.fail(
            "ACP-AGENT-LOAD-002", "no update replayed before the session/load answer"
        )
    elif after:
        s.fail(
            "ACP-AGENT-LOAD-002", f"{len(after)} updates after the session/load answer"
        )
    else:
        s.passed(
            "ACP-AGENT-LOAD-002", f"{len(before)} updates replayed before the answer"
        )
    kinds = {
        ((r.message.get("params") or {}).get("update") or {}).get("sessionUpdate")
        for r in before
    }
    s.check(
        "ACP-AGENT-LOAD-003",
        "user_message_chunk" in kinds,
        f"replayed kinds: {sorted(k for k in kinds if k)}",
    )


def session_families(s: Scenario) -> None:
    """session/list, resume, close, fork, delete: each the agent advertised, called."""
    wanted = [
        m
        for m in (
            "session/list",
            "session/resume",
            "session/close",
            "session/fork",
            "session/delete",
        )
        if (rid := s.kit.derived("capability-honor", m)) and s.applies(rid)
    ]
    if not wanted:
        return
    session = s.session()
    if session is None:
        return
    if "session/resume" in wanted:
        # a turn first, so that resuming has history it must not send
        s.prompt(session, [{"type": "text", "text": "Remember this turn."}])
        s.driver.pump(s.quiet)
    for method in wanted:
        honor = s.kit.derived("capability-honor", method)
        params: dict[str, Any] = {"sessionId": session}
        if method == "session/list":
            params = {}
        elif method in ("session/resume", "session/fork"):
            params = {"sessionId": session, "cwd": s.cwd, "mcpServers": []}
        count = len(s.driver.received)
        key = s.driver.start(method, params)
        answer = s.driver.wait(key)
        refused = answer is None or _error_code(answer) in (-32601, -32602)
        s.check(honor, not refused, f"{method}: {_describe(answer)}")
        result = _result(answer)
        if method == "session/list":
            s.check(
                "ACP-AGENT-LIST-001",
                result is not None and isinstance(result.get("sessions"), list),
                f"session/list: {_describe(answer)}",
            )
            empty = s.driver.request(
                "session/list", {"cwd": "/nonexistent/acp-conformance"}
            )
            s.check(
                "ACP-AGENT-LIST-002",
                (_result(empty) or {}).get("sessions") == [],
                f"session/list for an unknown cwd: {_describe(empty)}",
            )
            stray = s.driver.request(
                "session/list", {"cursor": "acp-conformance-never-issued"}
            )
            s.check(
                "ACP-AGENT-LIST-003",
                stray is not None and "error" in stray,
                f"session/list with a cursor never issued: {_describe(stray)}",
            )
        elif method == "session/resume":
            s.check(
                "ACP-AGENT-RESUME-001",
                result is not None,
                f"session/resume: {_describe(answer)}",
            )
            if result is not None:
                answered = s.driver.answers[key].t
                history = [
                    r
                    for r in s.driver.received[count:]
                    if r.message.get("method") == "session/update" and r.t <= answered
                ]
                s.check(
                    "ACP-AGENT-RESUME-002",
                    not history,
                    f"{len(history)} updates before the resume answer",
                )
        elif method == "session/close":
            s.check(
                "ACP-AGENT-CLOSE-001",
                result is not None,
                f"session/close: {_describe(answer)}",
            )
            _close_during_turn(s)
        elif method == "session/fork":
            other = (result or {}).get("sessionId")
            s.check(
                "ACP-AGENT-FORK-001",
                isinstance(other, str) and other != session,
                f"session/fork: {_describe(answer)}",
            )
        elif method == "session/delete":
            s.check(
                "ACP-AGENT-DELETE-001",
                result is not None,
                f"session/delete: {_describe(answer)}",
            )
            never = s.driver.request(
                "session/delete", {"sessionId": "acp-conformance-no-such-session"}
            )
            s.check(
                "ACP-AGENT-DELETE-002",
                _result(never) is not None,
                f"session/delete of a session that never existed: {_describe(never)}",
            )
            if result is not None and "session/list" in wanted:
                listed = _result(s.driver.request("session/list", {})) or {}
                sessions = listed.get("sessions")
                ids = [
                    i.get("sessionId") for i in sessions or [] if isinstance(i, dict)
                ]
                s.check(
                    "ACP-AGENT-DELETE-003",
                    isinstance(sessions, list) and session not in ids,
                    f"after session/delete of {session!r}, session/list answered "
                    f"{sessions!r}",
                )


def _close_during_turn(s: Scenario) -> None:
    """session/close of a session in a turn ends the turn as session/cancel would."""
    session = (_result(s.new_session_answer()) or {}).get("sessionId")
    if not isinstance(session, str):
        s.skip("ACP-AGENT-CLOSE-002", "no second session to close during a turn")
        return
    prompt = [{"type": "text", "text": s.options.cancel_prompt}]
    key = s.driver.start("session/prompt", {"sessionId": session, "prompt": prompt})
    trigger = time.monotonic() + 0.5
    while key not in s.driver.answers and time.monotonic() < trigger:
        got = s.driver.step(trigger - time.monotonic())
        if got is not None and got.message.get("method") == "session/update":
            break
    if key in s.driver.answers:
        s.skip(
            "ACP-AGENT-CLOSE-002",
            "the turn ended before session/close could be sent: give a longer "
            "--cancel-prompt",
        )
        return
    s.driver.cancelled.add(session)
    closed = s.driver.start("session/close", {"sessionId": session})
    closed_at = time.monotonic()
    answer = s.driver.wait(key)
    s.driver.wait(closed)
    reason = (_result(answer) or {}).get("stopReason")
    if (
        reason not in (None, "cancelled")
        and s.driver.answers[key].t - closed_at <= s.quiet
    ):
        s.skip(
            "ACP-AGENT-CLOSE-002",
            f"answered {reason!r} right after session/close: it may have ended first",
        )
        return
    s.check(
        "ACP-AGENT-CLOSE-002",
        reason == "cancelled",
        f"after session/close during its turn, the prompt answered {_describe(answer)}",
    )


SCENARIOS: tuple[tuple[str, Callable[[Scenario], None]], ...] = (
    ("initialize", initialize),
    ("initialize-minimal", initialize_minimal),
    ("initialize-unsupported-version", initialize_unsupported),
    ("authenticate", authenticate),
    ("session-new", session_new),
    ("mcp-stdio", mcp_stdio),
    ("prompt-text", prompt_text),
    ("prompt-meta", prompt_meta),
    ("prompt-resource-link", prompt_resource_link),
    ("unknown-session", unknown_session),
    ("prompt-content", prompt_content),
    ("cancel", cancel),
    ("cancel-request", cancel_request),
    ("notifications", notifications),
    ("unknown-methods", unknown_methods),
    ("malformed", malformed),
    ("ids", ids),
    ("load", load),
    ("session-families", session_families),
)
"""Every agent scenario, in the order they run (``initialize`` first: what the agent
advertises there decides what the others exercise)."""

COVERS: dict[str, tuple[str, ...]] = {
    "initialize": (
        "ACP-AGENT-INIT-001",
        "ACP-AGENT-INIT-002",
        "ACP-AGENT-INIT-004",
        "handler:initialize",
    ),
    "initialize-minimal": ("ACP-AGENT-INIT-005",),
    "initialize-unsupported-version": ("ACP-AGENT-INIT-003",),
    "authenticate": (
        "ACP-AGENT-AUTH-005",
        "ACP-AGENT-AUTH-002",
        "handler:authenticate",
    ),
    "session-new": (
        "ACP-AGENT-SESSION-001",
        "ACP-AGENT-SESSION-002",
        "handler:session/new",
    ),
    "mcp-stdio": ("ACP-AGENT-SESSION-004",),
    "prompt-text": (
        "ACP-AGENT-PROMPT-001",
        "ACP-AGENT-PROMPT-002",
        "ACP-AGENT-PROMPT-004",
        "handler:session/prompt",
    ),
    "prompt-meta": ("ACP-PEER-EXT-003",),
    "prompt-resource-link": ("ACP-AGENT-PROMPT-003",),
    "unknown-session": ("ACP-AGENT-SESSION-003",),
    "cancel": ("ACP-AGENT-CANCEL-001", "ACP-AGENT-CANCEL-002"),
    "cancel-request": ("ACP-PEER-CANCELREQ-001", "handler:$/cancel_request"),
    "notifications": ("ACP-PEER-RPC-004", "ACP-PEER-EXT-002", "handler:session/cancel"),
    "unknown-methods": ("ACP-PEER-EXT-001", "ACP-PEER-RPC-006"),
    "malformed": ("ACP-PEER-RPC-007", "ACP-PEER-RPC-008", "ACP-PEER-RPC-009"),
    "ids": ("ACP-PEER-RPC-001", "ACP-PEER-RPC-002"),
    "load": ("ACP-AGENT-LOAD-001", "ACP-AGENT-LOAD-002"),
    "session-families": (),
}
"""The requirements each scenario is there to judge (``handler:<method>``: the method's
derived handler requirement): a scenario the agent cut short reports them FAIL, and
``-k`` selects by them."""

__all__ = ["COVERS", "SCENARIOS", "PeerExited"]
