// Ordering, direction 1: a client on the official TypeScript SDK drives the Python agent
// tests/support/peers/target_agent.py (generated bindings only) through a turn of CHUNKS chunks
// (asked for with `_meta.chunks`). The transcript records the wire order where this process
// reads it: every session/update of the turn must arrive, in order, before the prompt's result.
//
//   node tests/interop/stream_client.mjs PYTHON AGENT_SCRIPT [CHUNKS]
//
// Prints one JSON object: {wire: ["update:<text>" | "result:<stopReason>", ...], sdkHandled}.
// `sdkHandled` is how many updates the SDK's own client had handed over when prompt() resolved
// (for the record: the SDK does not promise that order, which is not what this test checks).

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const [python, agentScript, chunksArg] = process.argv.slice(2);
const chunks = Number(chunksArg ?? 500);
const wire = [];
let handled = 0;

function tap(stream) {
  const incoming = new TransformStream({
    transform(message, controller) {
      if (message.method === "session/update") wire.push(`update:${message.params.update.content.text}`);
      else if (message.result?.stopReason) wire.push(`result:${message.result.stopReason}`);
      controller.enqueue(message);
    },
  });
  stream.readable.pipeTo(incoming.writable).catch(() => {});
  return { readable: incoming.readable, writable: stream.writable };
}

const child = spawn(python, [agentScript], { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
const app = acp
  .client({ name: "acpgen-stream-client" })
  .onNotification(acp.methods.client.session.update, () => {
    handled += 1;
  });

let sdkHandled = null;
await app.connectWith(tap(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout))), async (agent) => {
  await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
  const result = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "stream" }],
    _meta: { chunks },
  });
  sdkHandled = handled;
  if (result.stopReason !== "end_turn") throw new Error(`stopReason ${result.stopReason}`);
});
child.stdin.end();
const code = await exited;
process.stdout.write(JSON.stringify({ wire, sdkHandled, agentExit: code }) + "\n");
