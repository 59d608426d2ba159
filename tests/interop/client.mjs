// Interop, direction 1: a client built on the official TypeScript SDK drives the Python agent
// tests/interop/py_agent.py (written only with the generated bindings) over stdio.
//
//   node tests/interop/client.mjs PYTHON [AGENT_SCRIPT]
//
// Flow: initialize (protocol version 1) -> session/new -> session/prompt during which the agent
// streams agent_message_chunk, plan, tool_call and tool_call_update updates, asks
// session/request_permission (this client selects "allow once") and reads a file through
// fs/read_text_file (this client serves it), ending with end_turn -> a second session/prompt that
// this client cancels with session/cancel while the agent waits for permission (the pending
// permission request is then answered "cancelled", as the protocol requires), ending with
// cancelled -> session/frobnicate, which must fail with -32601.
//
// Prints one JSON object on stdout: {ok, error, direction, sdk, transcript, problems}, where the
// transcript lists every JSON-RPC message in the order this process sent and received it. Exits
// non-zero on any failure.

import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

import * as acp from "@agentclientprotocol/sdk";

import { InteropFailure, SDK_VERSION, Transcript, check, conforms, deferred, fail, tapStream, watchdog } from "./wire.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const python = process.argv[2] ?? process.env.PYTHON ?? "python3";
const agentScript = process.argv[3] ?? path.join(here, "py_agent.py");

const NOTES_NAME = "notes.txt";
const NOTES = "alpha: the first line\nbeta: the second line\ngamma: the third line\n";

const transcript = new Transcript();
const problems = []; // failures inside handlers: the peer only sees -32603, this keeps the reason
let step = "start";
let child = null;
let agentExit = null; // {code, signal} once the Python agent has exited

function report(error) {
  const ok = error === null && problems.length === 0;
  const out = {
    ok,
    error: error === null ? null : String(error instanceof InteropFailure ? error.message : error?.stack ?? error),
    direction: "node-client -> python-agent",
    sdk: SDK_VERSION,
    agentExit,
    transcript: transcript.entries,
    problems,
  };
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
  return ok;
}

/** Wraps a handler so that a failed check is kept in `problems` as well as sent to the peer. */
function guard(handler) {
  return async (context) => {
    try {
      return await handler(context);
    } catch (error) {
      problems.push(`${context.method}: ${error instanceof InteropFailure ? error.message : error?.stack ?? error}`);
      throw error;
    }
  };
}

/** Reads the updates of one prompt turn until its stop message. */
async function drainTurn(session) {
  const updates = [];
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") return { updates, stop: message };
    updates.push(message.update);
  }
}

function kinds(updates) {
  return updates.map((u) => (u.status ? `${u.sessionUpdate}:${u.status}` : u.sessionUpdate));
}

async function run() {
  const workspace = await mkdtemp(path.join(os.tmpdir(), "acp-interop-"));
  const notesPath = path.join(workspace, NOTES_NAME);
  await writeFile(notesPath, NOTES);
  let sessionId = null;
  let hold = null; // set by the flow to hold the next permission request
  const permissionRequests = [];
  const fileReads = [];

  const app = acp
    .client({ name: "acpgen-interop-node-client" })
    .onRequest(
      acp.methods.client.session.requestPermission,
      guard(async ({ params }) => {
        permissionRequests.push(params);
        check(params.sessionId === sessionId, `permission asked for session ${params.sessionId}, not ${sessionId}`);
        if (hold !== null) {
          const held = hold;
          hold = null;
          held.arrived.resolve(params);
          return held.answer.promise;
        }
        const allow = params.options.find((option) => option.kind === "allow_once");
        check(allow !== undefined, `no allow_once option in ${JSON.stringify(params.options)}`);
        return { outcome: { outcome: "selected", optionId: allow.optionId } };
      }),
    )
    .onRequest(
      acp.methods.client.fs.readTextFile,
      guard(async ({ params }) => {
        fileReads.push(params);
        check(params.sessionId === sessionId, `file read for session ${params.sessionId}, not ${sessionId}`);
        check(path.isAbsolute(params.path), `fs/read_text_file path is not absolute: ${params.path}`);
        check(params.path.startsWith(workspace + path.sep), `fs/read_text_file outside the workspace: ${params.path}`);
        let lines = (await readFile(params.path, "utf8")).split(/(?<=\n)/);
        if (params.line != null) lines = lines.slice(Math.max(params.line - 1, 0));
        if (params.limit != null) lines = lines.slice(0, params.limit);
        return { content: lines.join("") };
      }),
    );

  child = spawn(python, [agentScript], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      agentExit = { code, signal };
      resolve(agentExit);
    });
  });
  exited.catch(() => {});

  const stream = tapStream(
    acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
    transcript,
    "client",
    "agent",
  );

  try {
    await app.connectWith(stream, async (agent) => {
      step = "initialize";
      check(acp.PROTOCOL_VERSION === 1, `the SDK speaks protocol version ${acp.PROTOCOL_VERSION}, expected 1`);
      const init = conforms(
        "zInitializeResponse",
        await agent.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
          clientInfo: { name: "acpgen-interop-node-client", version: SDK_VERSION },
        }),
        "the initialize result",
      );
      check(init.protocolVersion === 1, `the agent negotiated protocol version ${init.protocolVersion}, expected 1`);
      check(init.agentInfo?.name === "acpgen-interop-python-agent", `unexpected agentInfo ${JSON.stringify(init.agentInfo)}`);

      step = "session/new";
      const session = await agent.buildSession(workspace).start();
      conforms("zNewSessionResponse", session.newSessionResponse, "the session/new result");
      sessionId = session.sessionId;
      check(typeof sessionId === "string" && sessionId.length > 0, `bad session id ${JSON.stringify(sessionId)}`);

      step = "first session/prompt";
      const first = session.prompt([{ type: "text", text: `Summarise ${NOTES_NAME}` }]);
      const turn1 = await drainTurn(session);
      const result1 = conforms("zPromptResponse", await first, "the first session/prompt result");
      check(result1.stopReason === "end_turn", `first prompt stopped with ${result1.stopReason}, expected end_turn`);
      const kinds1 = kinds(turn1.updates);
      const expected1 = [
        "agent_message_chunk",
        "plan",
        "tool_call:pending",
        "tool_call_update:in_progress",
        "tool_call_update:completed",
        "agent_message_chunk",
      ];
      check(JSON.stringify(kinds1) === JSON.stringify(expected1), `first turn updates ${kinds1}, expected ${expected1}`);
      const toolCall = turn1.updates[2];
      check(toolCall.kind === "read" && toolCall.locations?.[0]?.path === notesPath, `tool_call ${JSON.stringify(toolCall)}`);
      const done = turn1.updates[4];
      check(
        done.toolCallId === toolCall.toolCallId && done.content?.[0]?.content?.text === NOTES,
        `the completed tool_call_update does not carry the file: ${JSON.stringify(done)}`,
      );
      const summary = turn1.updates[5].content;
      check(
        summary.type === "text" && summary.text.includes("3 lines") && summary.text.includes("alpha: the first line"),
        `the agent's summary does not reflect the file it read: ${JSON.stringify(summary)}`,
      );
      check(fileReads.length === 1 && fileReads[0].path === notesPath, `file reads ${JSON.stringify(fileReads)}`);
      check(permissionRequests.length === 1, `${permissionRequests.length} permission requests in the first turn`);
      check(permissionRequests[0].toolCall.toolCallId === toolCall.toolCallId, "permission asked for another tool call");

      step = "second session/prompt";
      const held = { arrived: deferred(), answer: deferred() };
      hold = held;
      const second = session.prompt(`Summarise ${NOTES_NAME} once more`);
      second.catch(() => {});
      const asked = await Promise.race([
        held.arrived.promise,
        second.then((r) => fail(`the second prompt ended (${r.stopReason}) before it asked for permission`)),
      ]);
      step = "session/cancel";
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });
      // The protocol: after session/cancel the client answers pending permission requests "cancelled".
      held.answer.resolve({ outcome: { outcome: "cancelled" } });
      step = "second session/prompt, after session/cancel";
      const turn2 = await drainTurn(session);
      const result2 = conforms("zPromptResponse", await second, "the second session/prompt result");
      check(result2.stopReason === "cancelled", `cancelled prompt stopped with ${result2.stopReason}, expected cancelled`);
      const kinds2 = kinds(turn2.updates);
      const expected2 = ["agent_message_chunk", "plan", "tool_call:pending"];
      check(JSON.stringify(kinds2) === JSON.stringify(expected2), `second turn updates ${kinds2}, expected ${expected2}`);
      check(asked.toolCall.toolCallId === turn2.updates[2].toolCallId, "permission asked for another tool call");
      check(fileReads.length === 1, "the agent read the file although its turn was cancelled");

      step = "unknown method";
      try {
        await agent.request("session/frobnicate", { sessionId });
        fail("session/frobnicate was answered with a result");
      } catch (error) {
        if (error instanceof InteropFailure) throw error;
        check(error instanceof acp.RequestError, `session/frobnicate failed without a JSON-RPC error: ${error}`);
        check(error.code === -32601, `session/frobnicate failed with ${error.code}, expected -32601`);
      }

      const wireUpdates = transcript.count((e) => e.method === "session/update");
      check(
        wireUpdates === turn1.updates.length + turn2.updates.length,
        `${wireUpdates} session/update notifications on the wire, but the SDK accepted ` +
          `${turn1.updates.length + turn2.updates.length} (the others failed its schema)`,
      );
      session.dispose();
    });

    step = "shutdown";
    child.stdin.end(); // EOF: the agent's Connection.run() returns and the agent exits
    const { code, signal } = await exited;
    check(code === 0, `the Python agent exited with ${code ?? signal}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    await rm(workspace, { recursive: true, force: true });
  }
}

watchdog(
  50,
  () => step,
  (error) => {
    child?.kill();
    report(error);
    process.exit(1);
  },
);

try {
  await run();
  process.exitCode = report(null) ? 0 : 1;
} catch (error) {
  report(error instanceof InteropFailure ? error : new InteropFailure(`${step}: ${error?.stack ?? error}`));
  process.exitCode = 1;
}
