"""Interop, direction 2: an ACP client written only with the generated bindings drives the Node
agent tests/interop/node_agent.mjs (built on the official TypeScript SDK) over its stdio.

    python tests/interop/py_client.py [--node NODE] [--agent AGENT_SCRIPT]

It uses the generated ``senders.AgentSender`` (calls to the agent, gated by the agent's
capabilities once initialized), ``interfaces.Client``, ``dispatch.Dispatcher``,
``connection.Connection`` and ``initialization.accepts_version``; the unknown method goes through
the connection's raw ``request``, since no typed sender exists for a method outside the schema.

Flow: initialize (protocol version 1) -> session/new -> session/prompt, during which the agent
streams agent_message_chunk, plan, tool_call and tool_call_update updates, asks
session/request_permission (this client allows it) and reads a file through fs/read_text_file
(this client serves it), ending with end_turn -> a second session/prompt that this client cancels
with session/cancel while the agent waits for permission (the pending permission request is then
answered "cancelled"), ending with cancelled -> session/frobnicate, which must fail with -32601.

Prints one JSON object on stdout: {ok, error, direction, transcript, problems}, in the format of
tests/interop/wire.mjs; the transcript is recorded where this process writes and reads the wire.
Exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shutil
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

from acp_bindings import PROTOCOL_VERSION, methods, models
from acp_bindings.connection import Connection, LineTransport
from acp_bindings.dispatch import Dispatcher
from acp_bindings.errors import METHOD_NOT_FOUND, RequestError
from acp_bindings.initialization import accepts_version
from acp_bindings.interfaces import Client
from acp_bindings.senders import AgentSender

HERE = Path(__file__).resolve().parent
NOTES_NAME = "notes.txt"
NOTES = "alpha: the first line\nbeta: the second line\ngamma: the third line\n"
TIMEOUT = 50


class InteropFailure(Exception):
    """A failed check of the interop flow."""


def check(condition: object, message: str) -> None:
    if not condition:
        raise InteropFailure(message)


# -- the wire transcript (same format as tests/interop/wire.mjs) ------------------------------------


def _detail(kind: str, method: str | None, body: Any) -> str | None:
    body = body if isinstance(body, dict) else {}
    if kind == "error":
        return f"code={body.get('code')}"
    if kind in ("request", "notification"):
        if method == "session/update":
            update = body.get("update") or {}
            status = f":{update['status']}" if update.get("status") else ""
            return f"{update.get('sessionUpdate')}{status}"
        if method == "$/cancel_request":
            return f"requestId={body.get('requestId')}"
        if method == "initialize":
            return f"protocolVersion={body.get('protocolVersion')}"
        return None
    if method == "initialize":
        return f"protocolVersion={body.get('protocolVersion')}"
    if method == "session/prompt":
        return f"stopReason={body.get('stopReason')}"
    if method == "session/request_permission":
        outcome = body.get("outcome") or {}
        if outcome.get("outcome") == "selected":
            return f"selected:{outcome.get('optionId')}"
        return str(outcome.get("outcome"))
    return None


class Transcript:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self._requests: dict[str, dict[Any, str]] = {"client": {}, "agent": {}}

    def record(self, sender: str, message: Any) -> None:
        other = "agent" if sender == "client" else "client"
        if not isinstance(message, dict):
            self.entries.append({"from": sender, "kind": "invalid", "method": None, "id": None, "detail": None})
            return
        if isinstance(message.get("method"), str):
            kind = "request" if "id" in message else "notification"
            if kind == "request":
                self._requests[sender][message["id"]] = message["method"]
            self.entries.append(
                {
                    "from": sender,
                    "kind": kind,
                    "method": message["method"],
                    "id": message.get("id"),
                    "detail": _detail(kind, message["method"], message.get("params")),
                }
            )
            return
        method = self._requests[other].pop(message.get("id"), None)
        kind = "error" if "error" in message else "result"
        body = message.get("error") if kind == "error" else message.get("result")
        self.entries.append(
            {
                "from": sender,
                "kind": kind,
                "method": method,
                "id": message.get("id"),
                "detail": _detail(kind, method, body),
            }
        )


class TapReader:
    """Records each message that the connection reads (sent by the agent)."""

    def __init__(self, reader: asyncio.StreamReader, transcript: Transcript) -> None:
        self._reader = reader
        self._transcript = transcript

    async def read(self, limit: int = -1) -> bytes:
        """One whole message line per call (the connection reads in chunks; a line is a valid chunk)."""
        line = await self._reader.readline()
        if line.strip():
            try:
                self._transcript.record("agent", json.loads(line))
            except ValueError:
                self._transcript.record("agent", None)
        return line


class TapWriter:
    """Records each message that the connection writes (sent by this client)."""

    def __init__(self, writer: asyncio.StreamWriter, transcript: Transcript) -> None:
        self._writer = writer
        self._transcript = transcript

    def write(self, data: bytes) -> None:
        for line in data.splitlines():
            if line.strip():
                self._transcript.record("client", json.loads(line))
        self._writer.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)


# -- the client ------------------------------------------------------------------------------------


@dataclass
class Hold:
    """A permission request held back by the flow: ``arrived`` when asked, answered with ``answer``."""

    arrived: asyncio.Future[models.RequestPermissionRequest]
    answer: asyncio.Future[models.RequestPermissionResponse]


class InteropClient(Client):
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.session_id: str | None = None
        self.updates: list[models.SessionNotification] = []
        self.permission_requests: list[models.RequestPermissionRequest] = []
        self.file_reads: list[models.ReadTextFileRequest] = []
        self.problems: list[str] = []
        self._hold: Hold | None = None

    def _check(self, method: str, condition: object, message: str) -> None:
        if not condition:
            self.problems.append(f"{method}: {message}")
            raise InteropFailure(message)

    def hold_next_permission(self) -> Hold:
        loop = asyncio.get_running_loop()
        self._hold = Hold(arrived=loop.create_future(), answer=loop.create_future())
        return self._hold

    async def session_update(self, params: models.SessionNotification) -> None:
        self.updates.append(params)

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        self.permission_requests.append(params)
        self._check(methods.SESSION_REQUEST_PERMISSION, params.session_id == self.session_id, "wrong session")
        if self._hold is not None:
            hold, self._hold = self._hold, None
            hold.arrived.set_result(params)
            return await hold.answer
        allow = next((o for o in params.options if o.kind == "allow_once"), None)
        self._check(methods.SESSION_REQUEST_PERMISSION, allow is not None, f"no allow_once option: {params.options}")
        assert allow is not None
        return models.RequestPermissionResponse(
            outcome=models.SelectedRequestPermissionOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def read_text_file(self, params: models.ReadTextFileRequest) -> models.ReadTextFileResponse:
        self.file_reads.append(params)
        method = methods.FS_READ_TEXT_FILE
        self._check(method, params.session_id == self.session_id, "wrong session")
        path = Path(params.path)
        self._check(method, path.is_absolute(), f"path is not absolute: {params.path}")
        self._check(method, path.parent == self.workspace, f"path outside the workspace: {params.path}")
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if params.line is not None:
            lines = lines[max(params.line - 1, 0) :]
        if params.limit is not None:
            lines = lines[: params.limit]
        return models.ReadTextFileResponse(content="".join(lines))

    # The methods gated by capabilities this client does not advertise (fs.writeTextFile, terminal,
    # elicitation) keep the interface's "method not found" defaults.


def update_kinds(updates: list[models.SessionNotification]) -> list[str]:
    kinds = []
    for notification in updates:
        update = notification.update
        status = getattr(update, "status", None)
        kinds.append(f"{update.session_update}:{status}" if status else update.session_update)
    return kinds


async def first_of(wanted: asyncio.Future[Any], other: asyncio.Future[Any], what: str) -> Any:
    """``wanted``'s result, failing if ``other`` finishes first (instead of waiting forever)."""
    done, _ = await asyncio.wait({wanted, other}, return_when=asyncio.FIRST_COMPLETED)
    if wanted in done:
        return wanted.result()
    raise InteropFailure(f"{what}; instead: {other.result()!r}")


class Run:
    def __init__(self, node: str, agent_script: Path) -> None:
        self.node = node
        self.agent_script = agent_script
        self.transcript = Transcript()
        self.step = "start"
        self.client: InteropClient | None = None
        self.agent_exit: int | None = None

    async def main(self, workspace: Path) -> None:
        notes_path = workspace / NOTES_NAME
        notes_path.write_text(NOTES, encoding="utf-8")
        client = self.client = InteropClient(workspace)
        proc = await asyncio.create_subprocess_exec(
            self.node, str(self.agent_script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdin is not None and proc.stdout is not None
        connection = Connection(
            LineTransport(TapReader(proc.stdout, self.transcript), TapWriter(proc.stdin, self.transcript)),
            Dispatcher(client, methods.handled_by("client", "both")).dispatch,
        )
        runner = asyncio.create_task(connection.run())
        agent = AgentSender(connection)
        try:
            await self.flow(agent, connection, client, workspace, notes_path)
            self.step = "shutdown"
            await connection.close()  # EOF on the agent's stdin: the SDK connection closes, node exits
            await runner  # ends at EOF on the agent's stdout
            code = await proc.wait()
            check(code == 0, f"the Node agent exited with {code}")
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            else:
                self.agent_exit = proc.returncode
            runner.cancel()

    async def flow(
        self,
        agent: AgentSender,
        connection: Connection,
        client: InteropClient,
        workspace: Path,
        notes_path: Path,
    ) -> None:
        self.step = "initialize"
        init = await agent.initialize(
            models.InitializeRequest(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=models.ClientCapabilities(
                    fs=models.FileSystemCapabilities(read_text_file=True, write_text_file=False), terminal=False
                ),
                client_info=models.Implementation(name="acpgen-interop-python-client", version="0.1.0"),
            )
        )
        check(PROTOCOL_VERSION == 1, f"the bindings speak protocol version {PROTOCOL_VERSION}, expected 1")
        check(accepts_version(init.protocol_version), f"the agent answered version {init.protocol_version}")
        check(init.protocol_version == 1, f"the agent negotiated protocol version {init.protocol_version}")
        agent.peer_capabilities = init.agent_capabilities  # the sender now refuses ungranted calls
        check(init.agent_info is not None and init.agent_info.name == "acpgen-interop-node-agent", "agentInfo")

        self.step = "session/new"
        new = await agent.new_session(models.NewSessionRequest(cwd=str(workspace), mcp_servers=[]))
        session_id = client.session_id = new.session_id
        check(session_id, "empty session id")

        self.step = "first session/prompt"
        prompt = [models.TextContentBlock(type_="text", text=f"Summarise {NOTES_NAME}")]
        result1 = await agent.prompt(models.PromptRequest(session_id=session_id, prompt=prompt))
        check(result1.stop_reason == "end_turn", f"first prompt stopped with {result1.stop_reason}, expected end_turn")
        turn1 = list(client.updates)
        check(all(n.session_id == session_id for n in turn1), "an update for another session")
        kinds1 = update_kinds(turn1)
        expected1 = [
            "agent_message_chunk",
            "plan",
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:completed",
            "agent_message_chunk",
        ]
        check(kinds1 == expected1, f"first turn updates {kinds1}, expected {expected1}")
        tool_call = turn1[2].update
        assert isinstance(tool_call, models.ToolCallSessionUpdate)
        check(
            tool_call.kind == "read" and tool_call.locations and tool_call.locations[0].path == str(notes_path),
            f"tool_call {tool_call!r}",
        )
        completed = turn1[4].update
        assert isinstance(completed, models.ToolCallUpdateSessionUpdate)
        check(completed.tool_call_id == tool_call.tool_call_id, "tool_call_update for another tool call")
        content = completed.content[0] if completed.content else None
        check(
            isinstance(content, models.ContentToolCallContent)
            and isinstance(content.content, models.TextContentBlock)
            and content.content.text == NOTES,
            f"the completed tool_call_update does not carry the file: {completed!r}",
        )
        summary = turn1[5].update
        assert isinstance(summary, models.AgentMessageChunkSessionUpdate)
        check(
            isinstance(summary.content, models.TextContentBlock)
            and "3 lines" in summary.content.text
            and "alpha: the first line" in summary.content.text,
            f"the agent's summary does not reflect the file it read: {summary.content!r}",
        )
        check(len(client.file_reads) == 1 and client.file_reads[0].path == str(notes_path), "file reads")
        check(len(client.permission_requests) == 1, f"{len(client.permission_requests)} permission requests")
        check(client.permission_requests[0].tool_call.tool_call_id == tool_call.tool_call_id, "permission target")

        self.step = "second session/prompt"
        client.updates.clear()
        hold = client.hold_next_permission()
        second = asyncio.ensure_future(
            agent.prompt(
                models.PromptRequest(
                    session_id=session_id,
                    prompt=[models.TextContentBlock(type_="text", text=f"Summarise {NOTES_NAME} once more")],
                )
            )
        )
        asked = await first_of(hold.arrived, second, "the second prompt ended before it asked for permission")
        self.step = "session/cancel"
        await agent.cancel(models.CancelNotification(session_id=session_id))
        # The protocol: after session/cancel the client answers pending permission requests "cancelled".
        hold.answer.set_result(
            models.RequestPermissionResponse(outcome=models.CancelledRequestPermissionOutcome(outcome="cancelled"))
        )
        self.step = "second session/prompt, after session/cancel"
        result2 = await second
        check(result2.stop_reason == "cancelled", f"cancelled prompt stopped with {result2.stop_reason}")
        kinds2 = update_kinds(client.updates)
        expected2 = ["agent_message_chunk", "plan", "tool_call:pending"]
        check(kinds2 == expected2, f"second turn updates {kinds2}, expected {expected2}")
        check(asked.tool_call.tool_call_id == client.updates[2].update.tool_call_id, "permission target")  # type: ignore[union-attr]
        check(len(client.file_reads) == 1, "the agent read the file although its turn was cancelled")

        self.step = "unknown method"
        try:
            answer = await connection.request("session/frobnicate", {"sessionId": session_id})
        except RequestError as error:
            check(error.code == METHOD_NOT_FOUND, f"session/frobnicate failed with {error.code}, expected -32601")
        else:
            raise InteropFailure(f"session/frobnicate was answered with a result: {answer!r}")

        wire_updates = sum(1 for e in self.transcript.entries if e["method"] == "session/update")
        check(wire_updates == len(turn1) + len(client.updates), f"{wire_updates} session/update on the wire")

    def report(self, error: str | None) -> bool:
        problems = self.client.problems if self.client else []
        ok = error is None and not problems
        out = {
            "ok": ok,
            "error": error,
            "direction": "python-client -> node-agent",
            "agentExit": self.agent_exit,
            "transcript": self.transcript.entries,
            "problems": problems,
        }
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return ok


async def amain(run: Run) -> str | None:
    with tempfile.TemporaryDirectory(prefix="acp-interop-") as tmp:
        try:
            async with asyncio.timeout(TIMEOUT):
                await run.main(Path(tmp).resolve())
        except TimeoutError:
            return f"timed out after {TIMEOUT}s during step: {run.step}"
        except InteropFailure as failure:
            return f"{run.step}: {failure}"
        except Exception:  # noqa: BLE001 - the report carries any failure
            return f"{run.step}: {traceback.format_exc()}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node", default=shutil.which("node") or "node")
    parser.add_argument("--agent", type=Path, default=HERE / "node_agent.mjs")
    args = parser.parse_args()
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="py_client: %(levelname)s %(name)s: %(message)s"
    )
    run = Run(args.node, args.agent)
    error = asyncio.run(amain(run))
    return 0 if run.report(error) else 1


if __name__ == "__main__":
    sys.exit(main())
