// Remote interop: the TypeScript SDK's remote clients (experimental/http-client createHttpStream,
// experimental/ws-client createWebSocketStream with the `ws` package) drive an agent served at URL
// through the "turn" flow: initialize, two sessions on one connection, a turn of CHUNKS ordered
// updates then a permission request that is allowed, and a turn on the second session cancelled
// while the agent waits for permission.
//
//   node tests/interop/remote_client.mjs URL http|ws [CHUNKS]
//
// Prints one JSON report: {sessions, chunks: [the first session's texts in the order the client's
// handler was called], stops}.

import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";

const [url, profile, chunksArg] = process.argv.slice(2);
const chunks = Number(chunksArg ?? 60);
const handled = [];
let cancelTurn = null;

const stream =
  profile === "ws" ? createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket }) : createHttpStream(url);
const app = acp
  .client({ name: "acpgen-remote-node-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk") handled.push(`${params.sessionId}:${params.update.content.text}`);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    if (cancelTurn !== null && params.sessionId === cancelTurn.sessionId) {
      await cancelTurn.agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: "allow" } };
  });

const report = await app.connectWith(stream, async (agent) => {
  await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const one = (await agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] })).sessionId;
  const two = (await agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] })).sessionId;
  const text = (value) => [{ type: "text", text: value }];
  const first = await agent.request(acp.methods.agent.session.prompt, {
    sessionId: one,
    prompt: text(`stream ${chunks} permission`),
  });
  cancelTurn = { sessionId: two, agent };
  const second = await agent.request(acp.methods.agent.session.prompt, { sessionId: two, prompt: text("permission") });
  const ofOne = handled.filter((h) => h.startsWith(`${one}:`)).map((h) => h.slice(one.length + 1));
  return { sessions: [one, two], chunks: ofOne, stops: [first.stopReason, second.stopReason] };
});
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0);
