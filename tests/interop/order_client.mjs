// Remote order (issue 47): the TypeScript SDK's remote clients (createHttpStream, createWebSocketStream
// with the `ws` package) against an agent that streams COUNT notifications before each answer
// (tests/runtime/test_remote_order.py's agents). Counts what the client's handler saw when each call
// returned.
//
//   node tests/interop/order_client.mjs URL http|ws COUNT ROUNDS
//
// Prints one JSON report: {method: [handled when the call returned, per round]}; for the agent's own
// requests (_order/call, session/request_permission) the number of the client's COUNT notifications the
// agent saw before the client's answer.

import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";

const [url, profile, countArg, roundsArg] = process.argv.slice(2);
const count = Number(countArg);
const rounds = Number(roundsArg);
const texts = [];

async function notes(agent) {
  for (let n = 0; n < count; n++) await agent.notify("_order/note", { n });
}

const stream =
  profile === "ws" ? createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket }) : createHttpStream(url);
const app = acp
  .client({ name: "acpgen-order-node-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk") texts.push(params.update.content.text);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ agent }) => {
    await notes(agent);
    return { outcome: { outcome: "selected", optionId: "allow" } };
  })
  .onRequest("_order/call", (params) => params, async ({ agent }) => {
    await notes(agent);
    return {};
  });

const report = await app.connectWith(stream, async (agent) => {
  await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const sessionId = (await agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] })).sessionId;
  const calls = {
    "session/load": (_meta) => agent.request("session/load", { sessionId, cwd: "/tmp", mcpServers: [], _meta }),
    "session/resume": (_meta) => agent.request("session/resume", { sessionId, cwd: "/tmp", _meta }),
    "session/set_mode": (_meta) => agent.request("session/set_mode", { sessionId, modeId: "ask", _meta }),
    "session/set_config_option": (_meta) =>
      agent.request("session/set_config_option", { sessionId, configId: "model", value: "fast", _meta }),
    "_order/ext": (_meta) => agent.request("_order/ext", { session: sessionId, _meta }),
  };
  const asks = { "_order/call": "call", "session/request_permission": "permission" };
  const counts = {};
  for (let round = 0; round < rounds; round++) {
    for (const [method, call] of Object.entries(calls)) {
      const tag = `${method}#${round}`;
      await call({ order: { tag, count } });
      const handled = texts.filter((text) => text.startsWith(`${tag}:`));
      handled.forEach((text, n) => {
        if (text !== `${tag}:${n}`) throw new Error(`${method}: out of order`);
      });
      (counts[method] ??= []).push(handled.length);
    }
    for (const [method, kind] of Object.entries(asks)) {
      const answer = await agent.request("_order/ask", { kind, sessionId });
      (counts[method] ??= []).push(answer.notes);
    }
  }
  return counts;
});
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0);
