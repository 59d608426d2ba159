// The "turn" agent (turn_agent.mjs) on the TypeScript SDK served on stdio: what the relay tests put on the
// network (tests/runtime/test_relay_interop.py).
//
//   node tests/interop/stdio_turn_agent.mjs

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

import { createAgent } from "./turn_agent.mjs";

const connection = createAgent().connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
