// Remote interop with the echo agent (examples/echo_agent.py, which streams each prompt's words back, one chunk
// each): the TypeScript SDK's remote clients (experimental/http-client, experimental/ws-client with `ws`)
// initialize, open a session and send one prompt.
//
//   node tests/interop/echo_remote_client.mjs URL http|ws TEXT
//
// Prints one JSON report: {agent: the agentInfo name, chunks: the texts in the order the handler got them, stop}.

import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";

const [url, profile, text] = process.argv.slice(2);
const chunks = [];
const stream =
  profile === "ws" ? createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket }) : createHttpStream(url);
const app = acp.client({ name: "acpgen-echo-node-client" }).onNotification(acp.methods.client.session.update, ({ params }) => {
  if (params.update.sessionUpdate === "agent_message_chunk") chunks.push(params.update.content.text);
});

const report = await app.connectWith(stream, async (agent) => {
  const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
  const done = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  return { agent: init.agentInfo?.name ?? null, chunks, stop: done.stopReason };
});
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0);
