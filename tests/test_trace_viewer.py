"""Session state and the trace viewer on turns recorded from real agents over real pipes (issue 24).

A client built on the stable bindings folds what it sees live (``SessionStates``: each
``session/update``, each answered call), answers permission requests with ``PermissionPolicy``
and writes the wire trace (``trace=``). The trace then replays (``SessionState.from_trace``) to
the same state, and ``python -m acp_bindings.trace show`` prints it; its text and JSON are
golden files, its HTML page is opened in a real headless browser (the one ``tests/find_browser.py``
finds: ``$CHROMIUM``, else chromium or chrome on PATH; driven by playwright-core, installed by
``make browser-deps``; without a browser that test is skipped with the line saying how to enable
it, a ``CHROMIUM`` naming no executable fails it), which saves a screenshot in
``.test-artefacts/`` (or ``$ACP_TEST_ARTEFACTS``).

The agents: ``tests/peers/showcase_agent.py`` (every kind of the turn a real agent plays,
reported through ``ToolCallTracker``), ``examples/echo_agent.py``, and the TypeScript SDK agent
of the interop tests (``tests/interop/node_agent.mjs``).
"""

from __future__ import annotations

import asyncio
import json
import os
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

from tests.goldens import check_goldens

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "session-state"
UPDATE_GOLDENS = "uv run --frozen pytest tests/test_trace_viewer.py --update-goldens"
SHOWCASE = [sys.executable, str(ROOT / "tests" / "peers" / "showcase_agent.py")]
ECHO = [sys.executable, str(ROOT / "examples" / "echo_agent.py")]
NODE_AGENT = ["node", str(ROOT / "tests" / "interop" / "node_agent.mjs")]
BROWSER = ROOT / "tests" / "browser"
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
        [sys.executable, "-m", "acp_bindings.trace", "show", str(trace), "--format", form, *extra],
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


def golden_outputs(trace: Path, name: str) -> dict[str, str]:
    outputs = {}
    for form in ("text", "json"):
        done = show(trace, form)
        assert done.returncode == 0, done.stderr
        outputs[f"{name}.{'txt' if form == 'text' else 'json'}"] = done.stdout
    return outputs


def test_showcase_transcript_golden(showcase: tuple[Path, SessionStates], request: pytest.FixtureRequest) -> None:
    update = bool(request.config.getoption("--update-goldens"))
    check_goldens(
        golden_outputs(showcase[0], "showcase"),
        GOLDEN / "showcase",
        update=update,
        label="the showcase transcript",
        update_with=UPDATE_GOLDENS,
    )


def test_echo_and_interop_agent_turns(tmp_path: Path, request: pytest.FixtureRequest) -> None:
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
    update = bool(request.config.getoption("--update-goldens"))
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
    shot = artefacts() / "trace-viewer-showcase.png"
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
    seen = json.loads(ran.stdout)
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
    assert shot.is_file() and shot.stat().st_size > 10_000
