// The "turn" agent on the TypeScript SDK, the one tests/support/remote.py's TurnAgent plays in Python: one per connection; `stream N` answers N chunks "0".."N-1"; `permission` asks
// session/request_permission and, if allowed, sends the chunk "allowed"; if cancelled, waits for session/cancel
// and stops with "cancelled". Served over the network by remote_server.mjs, on stdio by stdio_turn_agent.mjs.

import * as acp from "@agentclientprotocol/sdk";

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

export function createAgent() {
  const sessions = new Map();
  return acp
    .agent({ name: "acpgen-remote-node-agent" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, () => {
      const sessionId = `node-${sessions.size + 1}`;
      sessions.set(sessionId, { cancelled: deferred() });
      return { sessionId };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const session = sessions.get(params.sessionId);
      if (session === undefined) throw acp.RequestError.sessionNotFound(params.sessionId);
      session.cancelled = deferred();
      const words = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join(" ").split(/\s+/);
      const chunk = (text) =>
        client.notify(acp.methods.client.session.update, {
          sessionId: params.sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
        });
      const at = words.indexOf("stream");
      const count = at >= 0 ? Number(words[at + 1]) : 0;
      for (let n = 0; n < count; n += 1) await chunk(String(n));
      if (words.includes("permission")) {
        const answer = await client.request(acp.methods.client.session.requestPermission, {
          sessionId: params.sessionId,
          toolCall: { toolCallId: "call-1", title: "Go on", kind: "other" },
          options: [
            { optionId: "allow", name: "Allow", kind: "allow_once" },
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        });
        if (answer.outcome.outcome === "cancelled") {
          await session.cancelled.promise;
          return { stopReason: "cancelled" };
        }
        await chunk(answer.outcome.optionId === "allow" ? "allowed" : "rejected");
      }
      return { stopReason: "end_turn" };
    })
    .onRequest(acp.methods.agent.session.setMode, () => ({})) // answered at once (make bench: T5, T6)
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.cancelled.resolve();
    });
}
