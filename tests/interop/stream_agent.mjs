// Ordering, direction 2: an agent on the official TypeScript SDK that streams a long turn. Each
// session/prompt sends `_meta.chunks` (default 500) agent_message_chunk updates whose texts are
// "0", "1", ... in order, awaiting each send, then answers end_turn. Spawned by
// tests/interop/py_stream_client.py; see tests/runtime/test_ordering.py.

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const app = acp
  .agent({ name: "acpgen-stream-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: "stream-session" }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const chunks = params._meta?.chunks ?? 500;
    for (let n = 0; n < chunks; n += 1) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: String(n) } },
      });
    }
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
