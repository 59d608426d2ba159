// A minimal echo agent on the official TypeScript SDK's public API (its agent-side app on stdio),
// written as the SDK's documentation shows, for the conformance kit to check (tests/test_conformance_kit.py).
// It streams each word of a prompt back as an agent_message_chunk and honours session/cancel.
// What the kit reports about it are findings about the SDK, recorded, not test failures.

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const turns = new Map();
let sessions = 0;

const app = acp
  .agent({ name: "acpgen-conformance-echo-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {},
    agentInfo: { name: "acpgen-conformance-echo-agent", version: "1.0.0" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    sessions += 1;
    return { sessionId: `ts-session-${sessions}` };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const turn = { cancelled: false };
    turns.set(params.sessionId, turn);
    const words = params.prompt
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join(" ")
      .split(/\s+/)
      .filter((word) => word !== "");
    for (const word of words) {
      if (turn.cancelled) break;
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${word} ` } },
      });
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { stopReason: turn.cancelled ? "cancelled" : "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const turn = turns.get(params.sessionId);
    if (turn !== undefined) turn.cancelled = true;
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
