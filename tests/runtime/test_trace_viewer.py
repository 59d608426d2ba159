"""Session state and the trace viewer on turns recorded from real agents over real pipes (issue 24).

A client built on the stable bindings folds what it sees live (``SessionStates``: each
``session/update``, each answered call), answers permission requests with ``PermissionPolicy``
and writes the wire trace (``trace=``). The trace then replays (``SessionState.from_trace``) to
the same state, and ``python -m acp_bindings.trace show`` prints it; its text and JSON are
golden files, its HTML page is opened in a real headless browser (the one ``tests/support/find_browser.py``
finds: ``$CHROMIUM``, else chromium or chrome on PATH; driven by playwright-core, installed by
``make browser-deps``; without a browser those tests are skipped with the line saying how to enable
it, a ``CHROMIUM`` naming no executable fails them), which saves a screenshot in
``.test-artefacts/`` (or ``$ACP_TEST_ARTEFACTS``).

The agents: ``tests/support/peers/showcase_agent.py`` (every kind of the turn a real agent plays,
reported through ``ToolCallTracker``), ``examples/echo_agent.py``, and the TypeScript SDK agent
of the interop tests (``tests/interop/node_agent.mjs``). Besides them, a fixed trace shaped like
claude-agent-acp's (``tests/traces/claude-agent-acp.jsonl``, written from the shapes its source
declares, issue 30): terminal output streamed in ``_meta`` (``terminal_info``, one or several
``terminal_output`` chunks, ``terminal_exit``), several tool calls, a permission request, modes,
config options, commands, ``agentInfo`` and times; and a hostile trace whose every text tries
to open a script.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, builders, methods, models
from acp_bindings.interfaces import Client
from acp_bindings.permissions import PermissionPolicy
from acp_bindings.serve import spawn_agent
from acp_bindings.session_state import SessionState, SessionStates

from tests.support.goldens import check_goldens
from tests.support.tools import acpgen

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "session-state"
UPDATE_GOLDENS = "make goldens (or: uv run --frozen pytest tests/runtime/test_trace_viewer.py --update-goldens)"
SHOWCASE = [sys.executable, str(ROOT / "tests" / "support" / "peers" / "showcase_agent.py")]
ECHO = [sys.executable, str(ROOT / "examples" / "echo_agent.py")]
NODE_AGENT = ["node", str(ROOT / "tests" / "interop" / "node_agent.mjs")]
BROWSER = ROOT / "tests" / "browser"
CLAUDE_SHAPED = ROOT / "tests" / "traces" / "claude-agent-acp.jsonl"
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00")
SECONDS = re.compile(r"\b(\d+ min )?\d+\.\d{3} s\b")
CWD = "/work/project"
LIMIT = 60.0  # seconds before a recording that hangs fails


class RecordingClient(Client):
    """Folds what it sees into ``states``; answers permissions by ``policy``, terminals and
    file reads with fixed text."""

    def __init__(self, states: SessionStates, policy: PermissionPolicy) -> None:
        self.states, self.policy = states, policy

    async def session_update(self, params: models.SessionNotification) -> None:
        self.states.update(params)

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        return self._fold(methods.SESSION_REQUEST_PERMISSION, params, await self.policy.decide(params))

    async def read_text_file(self, params: models.ReadTextFileRequest) -> models.ReadTextFileResponse:
        return self._fold(methods.FS_READ_TEXT_FILE, params, models.ReadTextFileResponse(content="alpha\nbeta\n"))

    async def create_terminal(self, params: models.CreateTerminalRequest) -> models.CreateTerminalResponse:
        return self._fold(methods.TERMINAL_CREATE, params, models.CreateTerminalResponse(terminal_id="term-1"))

    async def terminal_output(self, params: models.TerminalOutputRequest) -> models.TerminalOutputResponse:
        status = models.TerminalExitStatus(exit_code=0)
        answer = models.TerminalOutputResponse(output="3 passed in 0.02s\n", truncated=False, exit_status=status)
        return self._fold(methods.TERMINAL_OUTPUT, params, answer)

    async def release_terminal(self, params: models.ReleaseTerminalRequest) -> models.ReleaseTerminalResponse:
        return self._fold(methods.TERMINAL_RELEASE, params, models.ReleaseTerminalResponse())

    def _fold(self, method: str, params: Any, answer: Any) -> Any:
        self.states.call(method, params, answer)
        return answer


async def always(request: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
    """The user's answer: the first "always" option offered, else the first that allows."""
    ranked = sorted(request.options, key=lambda o: (o.kind != "allow_always", not str(o.kind).startswith("allow")))
    option = ranked[0]
    return builders.request_permission_response(builders.selected_request_permission_outcome(option.option_id))


Turns = Callable[[Any, SessionStates, str], Awaitable[None]]


async def record(command: list[str], trace: Path, prompts: list[str], *, set_mode: str | None = None) -> SessionStates:
    """Run ``prompts`` as turns of one session against the agent ``command``, tracing the wire."""
    states = SessionStates()
    client = RecordingClient(states, PermissionPolicy(always))
    caps = models.ClientCapabilities(fs=models.FileSystemCapabilities(read_text_file=True), terminal=True)
    async with spawn_agent(command, client, trace=str(trace)) as agent:
        await agent.initialize(builders.initialize_request(PROTOCOL_VERSION, client_capabilities=caps))
        asked = builders.new_session_request(CWD, [])
        session = await agent.new_session(asked)
        states.call(methods.SESSION_NEW, asked, session)
        for text in prompts:
            prompt = builders.prompt_request(session.session_id, [builders.text_content_block(text)])
            states.call(methods.SESSION_PROMPT, prompt, await agent.prompt(prompt))
        if set_mode is not None:
            change = models.SetSessionModeRequest(session_id=session.session_id, mode_id=set_mode)
            states.call(methods.SESSION_SET_MODE, change, await agent.set_session_mode(change))
    return states


def recorded(command: list[str], trace: Path, prompts: list[str], **options: Any) -> SessionStates:
    async def bounded() -> SessionStates:
        return await asyncio.wait_for(record(command, trace, prompts, **options), LIMIT)

    return asyncio.run(bounded())


def show(trace: Path, form: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*acpgen("trace"), "show", str(trace), "--format", form, *extra],
        cwd=ROOT / "generated",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def showcase(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SessionStates]:
    trace = tmp_path_factory.mktemp("showcase") / "trace.jsonl"
    return trace, recorded(SHOWCASE, trace, ["Edit the notes", "Again, please"], set_mode="ask")


def test_showcase_state_as_the_client_saw_it(showcase: tuple[Path, SessionStates]) -> None:
    _, live = showcase
    (state,) = live.states.values()
    messages = list(state.messages.values())
    assert [m.kind for m in messages] == ["agent_thought_chunk", "agent_message_chunk", "agent_message_chunk"] * 2
    assert "".join(b.text for b in messages[1].content if isinstance(b, models.TextContentBlock)) == (
        "I will edit notes.txt, then run the tests."
    )
    edit = state.tool_calls["edit-1"]
    assert isinstance(edit.record, models.ToolCall) and edit.record.status == "completed"
    assert [type(c).__name__ for c in edit.record.content or []] == ["DiffToolCallContent"]
    assert edit.kinds == ("tool_call", "tool_call_update")  # the permission request's toolCall folds as an update
    assert state.plan is not None and [e.status for e in state.plan.entries] == ["completed", "completed"]
    mode = state.current_mode
    assert isinstance(mode, models.SessionModeState) and mode.current_mode_id == "ask"  # set_mode after the turn
    assert [m.id_ for m in mode.available_modes] == ["ask", "code"]  # from session/new, kept by the updates
    assert state.usage is not None and state.usage.used == 1200 and state.usage.cost is not None
    assert state.session_info is not None and state.session_info.title == "Edit the notes"
    assert state.available_commands is not None and state.available_commands.available_commands[0].name == "test"
    decisions = [c.result for c in state.calls if c.method == methods.SESSION_REQUEST_PERMISSION]
    assert decisions == [{"outcome": {"outcome": "selected", "optionId": "always"}}] * 2
    assert not state.unknown


def test_permission_policy_remembers_always_per_session(tmp_path: Path) -> None:
    asked: list[str] = []

    async def ask(request: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        asked.append(request.session_id)
        return await always(request)

    policy = PermissionPolicy(ask, rules={"read": "allow_once", "delete": "reject_always"})
    options = [
        models.PermissionOption(option_id="y", name="Yes", kind="allow_once"),
        models.PermissionOption(option_id="yy", name="Always", kind="allow_always"),
        models.PermissionOption(option_id="n", name="No", kind="reject_once"),
    ]

    def request(session: str, kind: str) -> models.RequestPermissionRequest:
        tool = models.ToolCallUpdate(tool_call_id="t", kind=kind)  # type: ignore[arg-type]
        return builders.request_permission_request(session, tool, options)

    def chosen(answer: models.RequestPermissionResponse) -> str:
        assert isinstance(answer.outcome, models.SelectedRequestPermissionOutcome)
        return answer.outcome.option_id

    async def scenario() -> list[str]:
        picks = [chosen(await policy.decide(request("s1", "edit"))) for _ in range(2)]
        picks.append(chosen(await policy.decide(request("s2", "edit"))))  # another session asks again
        picks.append(chosen(await policy.decide(request("s1", "read"))))  # a rule: once, never remembered
        picks.append(chosen(await policy.decide(request("s1", "delete"))))  # reject_always: no such option
        return picks

    assert asyncio.run(scenario()) == ["yy", "yy", "yy", "y", "n"]
    assert asked == ["s1", "s2"]
    assert policy.remembered("s1") == {"edit": "allow_always", "delete": "reject_always"}
    policy.forget("s1")
    assert policy.remembered("s1") == {}


def test_tracker_sends_only_what_changed(showcase: tuple[Path, SessionStates]) -> None:
    trace, _ = showcase
    updates = [
        json.loads(line)["message"]["params"]["update"]
        for line in trace.read_text(encoding="utf-8").splitlines()
        if '"session/update"' in line
    ]
    edit = [u for u in updates if u.get("toolCallId") == "edit-1"]
    assert edit[0]["sessionUpdate"] == "tool_call" and edit[0]["status"] == "pending"
    assert edit[1] == {"sessionUpdate": "tool_call_update", "toolCallId": "edit-1", "status": "in_progress"}
    assert set(edit[2]) == {"sessionUpdate", "toolCallId", "status", "content"}


def test_trace_replays_to_the_live_state(showcase: tuple[Path, SessionStates]) -> None:
    trace, live = showcase
    replayed = SessionState.from_trace(trace)
    assert list(replayed) == list(live.states)
    for session, state in live.states.items():
        assert replayed[session].to_json() == state.to_json()


def golden_outputs(trace: Path, name: str, *, recorded: bool = True) -> dict[str, str]:
    """The text and JSON transcripts of a trace; of a turn ``recorded`` now, with its times (which
    differ each run) replaced by ``<time>`` and ``<seconds>``."""
    outputs = {}
    for form in ("text", "json"):
        done = show(trace, form)
        assert done.returncode == 0, done.stderr
        text = done.stdout
        if recorded:
            assert TIME.search(text), "the transcript shows no time"
            text = SECONDS.sub("<seconds>", TIME.sub("<time>", text))
        outputs[f"{name}.{'txt' if form == 'text' else 'json'}"] = text
    return outputs


def test_showcase_transcript_golden(showcase: tuple[Path, SessionStates], update_goldens: bool) -> None:
    update = update_goldens
    check_goldens(
        golden_outputs(showcase[0], "showcase"),
        GOLDEN / "showcase",
        update=update,
        label="the showcase transcript",
        update_with=UPDATE_GOLDENS,
    )


@pytest.mark.interop
def test_echo_and_interop_agent_turns(tmp_path: Path, update_goldens: bool) -> None:
    """Turns recorded with our echo agent and with the TypeScript SDK's agent: the replay equals
    what the client saw, and the transcripts are golden."""
    outputs: dict[str, str] = {}
    for name, command in (("echo", ECHO), ("typescript-sdk", NODE_AGENT)):
        trace = tmp_path / f"{name}.jsonl"
        live = recorded(command, trace, ["hello from the client", "and again"])
        replayed = SessionState.from_trace(trace)
        assert {k: v.to_json() for k, v in replayed.items()} == {k: v.to_json() for k, v in live.states.items()}
        outputs |= golden_outputs(trace, name)
    node = json.loads(outputs["typescript-sdk.json"])["sessions"][0]["slots"]
    assert [t["fields"]["status"] for t in node["tool_calls"]] == ["completed", "completed"]
    update = update_goldens
    check_goldens(
        outputs, GOLDEN / "agents", update=update, label="the agents' transcripts", update_with=UPDATE_GOLDENS
    )


def test_show_refuses_what_it_cannot_read(tmp_path: Path, showcase: tuple[Path, SessionStates]) -> None:
    missing = show(tmp_path / "none.jsonl", "text")
    assert missing.returncode == 2 and "cannot read" in missing.stderr and "Traceback" not in missing.stderr
    other = show(showcase[0], "text", "--session", "nope")
    assert other.returncode == 2 and "show-1" in other.stderr
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b'\xff\xfe not json\n{"direction":"in","raw":"{"}\n[1,2]\n' + showcase[0].read_bytes())
    done = show(garbage, "text")
    assert done.returncode == 0 and "3 trace line(s) hold no message" in done.stdout


@pytest.mark.parametrize("form", ["text", "json", "html"])
def test_show_of_a_file_that_holds_no_message_exits_1_with_one_line(tmp_path: Path, form: str) -> None:
    """Issue 45: ``trace show my_agent.py`` (not a trace) says so in one line, exit 1, nothing on stdout."""
    script = tmp_path / "my_agent.py"
    script.write_text("import asyncio\n\nprint('hello')\n", encoding="utf-8")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    for path, lines in ((script, 3), (empty, 0)):
        done = show(path, form)
        assert (done.returncode, done.stdout) == (1, ""), done
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"{path} holds no ACP message ({lines} line" in done.stderr, done.stderr


def test_claude_shaped_trace_as_text_and_json(update_goldens: bool) -> None:
    """Terminal output that the agent streams in ``_meta`` shows in its tool call, whole and in
    order, with its exit; the turn ends after the reply; who spoke and the times are shown."""
    outputs = golden_outputs(CLAUDE_SHAPED, "claude-agent-acp", recorded=False)
    text = outputs["claude-agent-acp.txt"]
    assert text.startswith(
        "== agent Claude Agent (@agentclientprotocol/claude-agent-acp) 0.25.0, client Zed (zed) 0.201.3, protocol 1\n"
    )
    lint = (
        "* tool `npm run lint` [execute]: failed\n"
        "  $ terminal toolu_04Bash in /home/dev/MyProject\n"
        "  \n"
        "  /home/dev/MyProject/src/App.tsx\n"
        "    3:7  error  'Unused' is defined but never used\n"
        "  \n"
        "  \u2716 1 problem (1 error, 0 warnings)\n"
        "  [exit code 1]\n"
    )
    assert lint in text  # three chunks, joined in the order sent
    assert "  [exit code 0]\n" in text.split("* tool `npm test`")[1]
    reply = text.index("agent message:\n  Fixed: the greeting")
    assert text.index("> user") < reply < text.index("(turn ended: end_turn, 14.310 s)")
    data = json.loads(outputs["claude-agent-acp.json"])
    assert data["connection"][0]["result"]["agentInfo"]["version"] == "0.25.0"
    (session,) = data["sessions"]
    tools = {t["key"]: t for t in session["slots"]["tool_calls"]}
    assert tools["toolu_04Bash"]["fields"]["_meta"] == {
        "claudeCode": {"toolName": "Bash"},
        "terminal_info": {"terminal_id": "toolu_04Bash", "cwd": "/home/dev/MyProject"},
        "terminal_output": {"terminal_id": "toolu_04Bash", "data": "\n\u2716 1 problem (1 error, 0 warnings)\n"},
        "terminal_exit": {"terminal_id": "toolu_04Bash", "exit_code": 1, "signal": None},
    }
    chunks = [m["terminal_output"]["data"] for m in tools["toolu_04Bash"]["history"]["_meta"] if "terminal_output" in m]
    assert len(chunks) == 3 and "".join(chunks).endswith("(1 error, 0 warnings)\n")
    assert tools["toolu_03Bash"]["madeAt"] == "2026-01-15T09:30:11.149000+00:00"
    prompt = next(c for c in session["calls"] if c["method"] == "session/prompt")
    assert (prompt["askedAt"], prompt["at"]) == ("2026-01-15T09:30:05.139000+00:00", "2026-01-15T09:30:19.449000+00:00")
    update = update_goldens
    check_goldens(
        outputs, GOLDEN / "claude-agent-acp", update=update, label="the claude-shaped trace", update_with=UPDATE_GOLDENS
    )


def test_html_is_the_same_for_the_same_trace(tmp_path: Path) -> None:
    pages = []
    for seed in ("0", "1"):
        done = subprocess.run(
            [*acpgen("trace"), "show", str(CLAUDE_SHAPED), "--format", "html"],
            cwd=ROOT / "generated",
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        pages.append(done.stdout)
    assert pages[0] == pages[1]
    assert "<link" not in pages[0] and 'src="http' not in pages[0] and "url(" not in pages[0]  # nothing fetched


HOSTILE = '<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = 1">'
"""Text a peer may write anywhere: a script, and an element with a handler."""
QUOTED = '"><script>window.__pwned = "attribute"</script>'
"""Text that tries to leave an attribute first."""


def hostile_trace(path: Path) -> None:
    """A trace whose every text a peer chooses tries to open a script: names, ids (also in
    attributes), titles, paths, mode and option names, command names, terminal output, the plan,
    ``_meta``, a stop reason."""
    sid = QUOTED + HOSTILE
    lines: list[dict[str, Any]] = []

    def add(direction: str, message: dict[str, Any], second: int) -> None:
        lines.append({"at": f"2026-01-15T09:30:{second:02d}.000000+00:00", "direction": direction, "message": message})

    def update(body: dict[str, Any], second: int) -> None:
        params = {"sessionId": sid, "update": body}
        add("in", {"jsonrpc": "2.0", "method": "session/update", "params": params}, second)

    info = {"name": HOSTILE, "version": QUOTED}
    add(
        "out",
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientInfo": info}},
        0,
    )
    add("in", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentInfo": info}}, 1)
    add("out", {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}, 2)
    modes = {"currentModeId": QUOTED, "availableModes": [{"id": QUOTED, "name": HOSTILE, "description": HOSTILE}]}
    add("in", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": sid, "modes": modes}}, 3)
    add(
        "out",
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": [{"type": "text", "text": HOSTILE}]},
        },
        4,
    )
    update(
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": HOSTILE, "description": QUOTED}]},
        5,
    )
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": HOSTILE}}, 5)
    update({"sessionUpdate": "plan", "entries": [{"content": HOSTILE, "status": QUOTED, "priority": "high"}]}, 5)
    update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": QUOTED,
            "title": HOSTILE,
            "kind": "edit",
            "status": "pending",
            "content": [
                {"type": "diff", "path": HOSTILE, "oldText": HOSTILE, "newText": QUOTED},
                {"type": "terminal", "terminalId": QUOTED},
            ],
            "locations": [{"path": HOSTILE}],
            "_meta": {HOSTILE: QUOTED, "terminal_info": {"terminal_id": QUOTED, "cwd": HOSTILE}},
        },
        6,
    )
    meta = {
        "terminal_output": {"terminal_id": QUOTED, "data": HOSTILE},
        "terminal_exit": {"terminal_id": QUOTED, "exit_code": HOSTILE, "signal": QUOTED},
    }
    update({"sessionUpdate": "tool_call_update", "toolCallId": QUOTED, "status": "completed", "_meta": meta}, 7)
    update({"sessionUpdate": "image_chunk" + HOSTILE, "x": HOSTILE}, 7)
    add("in", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": QUOTED + HOSTILE}}, 8)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_hostile_trace_opens_no_script(tmp_path: Path, browser_path: str) -> None:
    """A trace is written by a peer: no text of it becomes markup. The page holds no script
    element and no event handler; a browser runs nothing, reports no blocked script and shows the
    text as it was sent."""
    trace, page = tmp_path / "hostile.jsonl", tmp_path / "hostile.html"
    hostile_trace(trace)
    done = show(trace, "html", "--output", str(page))
    assert done.returncode == 0, done.stderr
    markup = page.read_text(encoding="utf-8")
    assert "<script" not in markup.lower() and "<img" not in markup  # every < of the trace escaped
    seen = browse(page, "trace-viewer-hostile.png", browser_path)
    assert seen["scripts"] == 0 and seen["handlers"] == 0 and seen["pwned"] is None
    assert seen["errors"] == [] and seen["requests"] == []
    assert seen["userText"] == HOSTILE  # shown as sent
    assert HOSTILE in seen["agentText"] and [p[1] for p in seen["peers"][:2]] == [f"{HOSTILE} {QUOTED}"] * 2
    assert seen["turnEnds"][0]["reason"] == QUOTED + HOSTILE
    assert seen["toolTerminals"][0]["terminal"] == [HOSTILE]


def browse(page: Path, name: str, browser_path: str) -> dict[str, Any]:
    """What a reader sees of ``page`` in headless chromium (``tests/browser/check_page.mjs``), and
    its screenshot as ``name`` in the test artefacts."""
    shot = artefacts() / name
    shot.unlink(missing_ok=True)
    ran = subprocess.run(
        ["node", str(BROWSER / "check_page.mjs"), str(page), str(shot)],
        cwd=BROWSER,
        env={**os.environ, "CHROMIUM": browser_path},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert ran.returncode == 0, f"the browser check with {browser_path} failed:\n{ran.stderr}"
    assert shot.is_file() and shot.stat().st_size > 10_000
    seen: dict[str, Any] = json.loads(ran.stdout)
    return seen


def test_claude_shaped_trace_in_a_real_browser(tmp_path: Path, browser_path: str) -> None:
    page = tmp_path / "claude.html"
    done = show(CLAUDE_SHAPED, "html", "--output", str(page))
    assert done.returncode == 0, done.stderr
    seen = browse(page, "trace-viewer-claude-agent-acp.png", browser_path)
    assert seen["peers"] == [
        ["agent", "Claude Agent (@agentclientprotocol/claude-agent-acp) 0.25.0"],
        ["client", "Zed (zed) 0.201.3"],
        ["protocol", "1"],
    ]
    terminals = {t["title"]: (t["terminal"], t["exit"]) for t in seen["toolTerminals"]}
    assert terminals["`npm test`"] == (
        [
            "> my-project@1.0.0 test\n> vitest run\n\n"
            " \u2713 src/App.test.tsx (2 tests) 12ms\n\n Test Files  1 passed (1)\n"
        ],
        ["exit code 0"],
    )
    assert terminals["`npm run lint`"] == (
        [
            "\n/home/dev/MyProject/src/App.tsx\n  3:7  error  'Unused' is defined but never used\n"
            "\n\u2716 1 problem (1 error, 0 warnings)\n"
        ],
        ["exit code 1"],
    )
    assert terminals["Read src/App.tsx"] == ([], [])
    # the turn's end after the agent's reply, outside the user's card, with how long it took
    assert seen["turnEnds"] == [
        {
            "reason": "end_turn",
            "text": "turn ended: end_turn after 14.310 s +19.449 s",
            "insideMessage": False,
            "after": "agent_message_chunk",
        }
    ]
    # paths and titles in their own case
    paths = [p for p in seen["paths"] if "/home/dev/MyProject/src/App.tsx" in p["text"] or "App.tsx" in p["text"]]
    assert len(paths) >= 4 and all(p["shown"] == p["text"] and p["transform"] == "none" for p in paths), paths
    # modes, config options and commands as tables, the current rows marked
    tables = {t["slot"]: t for t in seen["tables"]}
    assert tables["current_mode"]["rows"] == 3 and tables["current_mode"]["current"] == ["acceptEdits"]
    assert tables["config_option"]["current"] == ["acceptEdits", "sonnet"]  # the mode's and the model's
    assert tables["config_option"]["rows"] == 2 + 3 + 2  # two options, their three and two values
    assert tables["available_commands"]["rows"] == 3
    assert all(t["json"] == 0 for t in seen["tables"])  # no raw JSON
    # times: the trace's start, each message relative to it, the absolute time kept
    assert seen["times"][0] == ["+0.000 s", "2026-01-15T09:30:00.000000+00:00"]
    assert ["+5.139 s", "2026-01-15T09:30:05.139000+00:00"] in seen["times"]
    assert seen["permissions"] == ["decision: Allow (allow_once)"]
    assert seen["scripts"] == 0 and seen["pwned"] is None and "<script>window.__pwned = 1</script>" in seen["userText"]
    assert seen["requests"] == [] and seen["errors"] == []


def artefacts() -> Path:
    folder = Path(os.environ.get("ACP_TEST_ARTEFACTS") or ROOT / ".test-artefacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_html_transcript_in_a_real_browser(
    showcase: tuple[Path, SessionStates], tmp_path: Path, browser_path: str
) -> None:
    page = tmp_path / "showcase.html"
    done = show(showcase[0], "html", "--output", str(page))
    assert done.returncode == 0, done.stderr
    seen = browse(page, "trace-viewer-showcase.png", browser_path)
    assert seen["sessions"] == 1 and seen["title"] == "ACP trace"
    assert seen["userMessages"] == 2 and seen["messages"] == 8  # 2 prompts, 2 x (thought + 2 messages)
    assert "I will edit notes.txt, then run the tests." in seen["agentText"]
    assert seen["tools"] == 4 and seen["toolStatuses"] == ["completed"] * 4
    assert seen["diffAdded"] == 6 and seen["diffRemoved"] == 4  # each: +++ header, "2", "four"; --- header, "two"
    assert "3 passed" in seen["terminalText"]
    assert seen["planEntries"] == 2
    assert seen["permissions"] == ["decision: Always allow edits (allow_always)"] * 2
    assert seen["opens"] == {"before": False, "after": True} and seen["visibleToolBodyAfterClick"] is True
    assert seen["requests"] == [] and seen["errors"] == []
    assert [t["after"] for t in seen["turnEnds"]] == ["agent_message_chunk"] * 2  # each after the reply
