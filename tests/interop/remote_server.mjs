// Remote interop: the TypeScript SDK's AcpServer (experimental/server) on node's http server with its
// node adapter and a `ws` WebSocket server, serving the "turn" agent that tests/support/remote.py's TurnAgent plays
// in Python: one agent per connection; `stream N` answers N chunks "0".."N-1"; `permission` asks
// session/request_permission and, if allowed, sends the chunk "allowed"; if cancelled, waits for
// session/cancel and stops with "cancelled".
//
//   node tests/interop/remote_server.mjs      (prints {"port": N} once listening; stops on stdin EOF)

import http from "node:http";

import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";

import { createAgent } from "./turn_agent.mjs";

const server = new AcpServer({ createAgent });
const webSockets = new WebSocketServer({ noServer: true });
const httpServer = http.createServer(createNodeHttpHandler(server));
httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, webSockets));
httpServer.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: httpServer.address().port }) + "\n");
});
process.stdin.resume();
process.stdin.on("end", async () => {
  await server.close();
  webSockets.close();
  httpServer.close();
  httpServer.closeAllConnections?.();
  process.exit(0);
});
