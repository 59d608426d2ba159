// A minimal client on the official TypeScript SDK's public API (its client-side app), written as
// the SDK's documentation shows, for the conformance kit to check (tests/test_conformance_kit.py):
//
//   node tests/interop/conformance_echo_client.mjs AGENT [ARGS...]
//
// It spawns the agent, initializes, opens a session in the current folder, sends one prompt,
// allows the first permission option offered, prints the agent's text and exits. What the kit
// reports about it are findings about the SDK, recorded, not test failures.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });

const app = acp.client({ name: "acpgen-conformance-echo-client" }).onRequest(
  acp.methods.client.session.requestPermission,
  async ({ params }) => ({ outcome: { outcome: "selected", optionId: params.options[0].optionId } }),
);

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
await app.connectWith(stream, async (agent) => {
  await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "acpgen-conformance-echo-client", version: "1.0.0" },
  });
  const session = await agent.buildSession(process.cwd()).start();
  const result = session.prompt("hello from the TypeScript SDK");
  result.catch(() => {});
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") break;
    const update = message.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      process.stdout.write(update.content.text);
    }
  }
  process.stdout.write(`\n(${(await result).stopReason})\n`);
});
child.stdin.end();
