// Interop, direction 2: a small agent on the official TypeScript SDK's agent-side app, served on
// stdio. It is spawned by tests/interop/py_client.py (a client written only with the generated
// bindings) and plays the same prompt turn as tests/interop/py_agent.py:
//
// an agent_message_chunk, a plan, a tool_call that reads notes.txt in the session's cwd, then
// session/request_permission. If allowed: tool_call_update (in_progress), fs/read_text_file,
// tool_call_update (completed, with the text), an agent_message_chunk summarising the file, and
// end_turn. If the answer is "cancelled" (the client cancels the turn with session/cancel first),
// the turn waits for that session/cancel and stops with "cancelled".
//
// The results the Python client sends back are checked against the SDK's own zod schemas (the
// SDK validates incoming params itself). Diagnostics go to stderr; a failed check is answered as
// a JSON-RPC error to the client and makes this process exit non-zero.

import path from "node:path";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

import { InteropFailure, SDK_VERSION, check, conforms, deferred } from "./wire.mjs";

const NOTES_NAME = "notes.txt";
const problems = [];
const sessions = new Map();
let clientCapabilities = null;

function guard(handler) {
  return async (context) => {
    try {
      return await handler(context);
    } catch (error) {
      const reason = error instanceof InteropFailure ? error.message : error?.stack ?? error;
      problems.push(`${context.method}: ${reason}`);
      process.stderr.write(`node_agent: ${context.method} failed: ${reason}\n`);
      throw error;
    }
  };
}

function text(value) {
  return { type: "text", text: value };
}

async function turn({ params, client }) {
  const session = sessions.get(params.sessionId);
  if (session === undefined) throw acp.RequestError.sessionNotFound(params.sessionId);
  session.turns += 1;
  session.cancelled = deferred();
  const { sessionId } = params;
  const notesPath = path.join(session.cwd, NOTES_NAME);
  const toolCallId = `read-notes-${session.turns}`;
  const update = (value) => client.notify(acp.methods.client.session.update, { sessionId, update: value });

  await update({ sessionUpdate: "agent_message_chunk", content: text(`Let me look at ${NOTES_NAME}.`) });
  await update({
    sessionUpdate: "plan",
    entries: [
      { content: `Read ${NOTES_NAME}`, priority: "high", status: "in_progress" },
      { content: "Summarise it", priority: "medium", status: "pending" },
    ],
  });
  await update({
    sessionUpdate: "tool_call",
    toolCallId,
    title: `Read ${NOTES_NAME}`,
    kind: "read",
    status: "pending",
    locations: [{ path: notesPath }],
  });
  const answer = conforms(
    "zRequestPermissionResponse",
    await client.request(acp.methods.client.session.requestPermission, {
      sessionId,
      toolCall: { toolCallId, title: `Read ${NOTES_NAME}`, kind: "read" },
      options: [
        { optionId: "allow", name: "Allow once", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    }),
    "the session/request_permission result",
  );
  if (answer.outcome.outcome === "cancelled") {
    // session/cancel comes before the "cancelled" answer: wait for it, do not assume it.
    await session.cancelled.promise;
    return { stopReason: "cancelled" };
  }
  if (answer.outcome.optionId !== "allow") {
    await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
    return { stopReason: "end_turn" };
  }
  check(clientCapabilities?.fs?.readTextFile === true, "the client did not advertise fs.readTextFile");

  await update({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  const file = conforms(
    "zReadTextFileResponse",
    await client.request(acp.methods.client.fs.readTextFile, { sessionId, path: notesPath }),
    "the fs/read_text_file result",
  );
  await update({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "completed",
    content: [{ type: "content", content: text(file.content) }],
  });
  const lines = file.content.split("\n").filter((line, i, all) => i < all.length - 1 || line !== "");
  await update({
    sessionUpdate: "agent_message_chunk",
    content: text(`${NOTES_NAME} has ${lines.length} lines; the first is '${lines[0] ?? ""}'.`),
  });
  return { stopReason: "end_turn" };
}

const app = acp
  .agent({ name: "acpgen-interop-node-agent" })
  .onRequest(
    acp.methods.agent.initialize,
    guard(({ params }) => {
      clientCapabilities = params.clientCapabilities ?? null;
      // Version negotiation: the requested version if supported, else the latest supported.
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: { loadSession: false },
        agentInfo: { name: "acpgen-interop-node-agent", version: SDK_VERSION },
        authMethods: [],
      };
    }),
  )
  .onRequest(
    acp.methods.agent.session.new,
    guard(({ params }) => {
      const sessionId = `node-session-${sessions.size + 1}`;
      sessions.set(sessionId, { cwd: params.cwd, turns: 0, cancelled: deferred() });
      return { sessionId };
    }),
  )
  .onRequest(acp.methods.agent.session.prompt, guard(turn))
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.cancelled.resolve();
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed; // the client closed our stdin
if (problems.length > 0) {
  process.stderr.write(`node_agent: ${problems.length} failed check(s)\n`);
  process.exitCode = 1;
}
