// Shared helpers of the Node side of the interop tests (client.mjs, node_agent.mjs).
//
// - tapStream: wraps an SDK Stream so that every JSON-RPC message that crosses it is
//   recorded, in the order this process sends and receives them, in a Transcript.
// - Transcript: the wire transcript in the format that tests/runtime/test_interop.py checks (the
//   Python side, py_client.py, writes the same format).
// - schemas: the SDK's own zod schemas, used to check the *results* that the Python peer
//   sends back (the SDK validates the params of incoming calls itself, but passes results
//   of outgoing requests through unchecked).
// - deferred, fail: small utilities.

import { readFileSync } from "node:fs";
import * as schemas from "./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";

export { schemas };

/** The version of the installed SDK (package.json pins it, with the schema lock: `make bump` moves both). */
export const SDK_VERSION = JSON.parse(
  readFileSync(new URL("./node_modules/@agentclientprotocol/sdk/package.json", import.meta.url), "utf8"),
).version;

export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export class InteropFailure extends Error {}

/** Throws an InteropFailure (an assertion of the interop flow). */
export function fail(message) {
  throw new InteropFailure(message);
}

export function check(condition, message) {
  if (!condition) fail(message);
}

/**
 * Parses `value` with one of the SDK's zod schemas; a mismatch is an interop failure that
 * names what was being checked.
 */
export function conforms(schemaName, value, what) {
  const result = schemas[schemaName].safeParse(value);
  if (!result.success) {
    fail(`${what} does not match the SDK's ${schemaName}: ${JSON.stringify(result.error.issues)}`);
  }
  return result.data;
}

/**
 * A one-line summary of what matters in a message, so that transcripts can be compared
 * exactly: the update kind (and tool-call status) of session/update, the negotiated
 * version, the stop reason, the permission outcome, the error code.
 */
function detailOf(kind, method, body) {
  if (kind === "error") return `code=${body?.code}`;
  if (kind === "notification" || kind === "request") {
    if (method === "session/update") {
      const update = body?.update ?? {};
      const status = update.status ? `:${update.status}` : "";
      return `${update.sessionUpdate}${status}`;
    }
    if (method === "$/cancel_request") return `requestId=${body?.requestId}`;
    if (method === "initialize") return `protocolVersion=${body?.protocolVersion}`;
    return null;
  }
  // a result
  if (method === "initialize") return `protocolVersion=${body?.protocolVersion}`;
  if (method === "session/prompt") return `stopReason=${body?.stopReason}`;
  if (method === "session/request_permission") {
    const outcome = body?.outcome ?? {};
    return outcome.outcome === "selected" ? `selected:${outcome.optionId}` : `${outcome.outcome}`;
  }
  return null;
}

export class Transcript {
  constructor() {
    this.entries = [];
    this.requests = { client: new Map(), agent: new Map() };
  }

  /** Records `message`, sent by `from` ("client" or "agent") to the other side. */
  record(from, message) {
    const other = from === "client" ? "agent" : "client";
    if (typeof message?.method === "string") {
      const kind = "id" in message ? "request" : "notification";
      if (kind === "request") this.requests[from].set(message.id, message.method);
      this.entries.push({
        from,
        kind,
        method: message.method,
        id: kind === "request" ? message.id : null,
        detail: detailOf(kind, message.method, message.params),
      });
      return;
    }
    // a response answers a request of the other side
    const method = this.requests[other].get(message?.id) ?? null;
    this.requests[other].delete(message?.id);
    const kind = message && "error" in message ? "error" : "result";
    const body = kind === "error" ? message.error : message?.result;
    this.entries.push({ from, kind, method, id: message?.id ?? null, detail: detailOf(kind, method, body) });
  }

  count(predicate) {
    return this.entries.filter(predicate).length;
  }
}

/**
 * Wraps an SDK Stream: messages read from `stream.readable` are recorded as sent by
 * `peer`, messages written by this side as sent by `self`, at the moment they pass.
 */
export function tapStream(stream, transcript, self, peer) {
  const incoming = new TransformStream({
    transform(message, controller) {
      transcript.record(peer, message);
      controller.enqueue(message);
    },
  });
  const outgoing = new TransformStream({
    transform(message, controller) {
      transcript.record(self, message);
      controller.enqueue(message);
    },
  });
  // Errors surface through the connection (its reads end, its writes reject); the pipes
  // themselves have nothing more to report.
  stream.readable.pipeTo(incoming.writable).catch(() => {});
  outgoing.readable.pipeTo(stream.writable).catch(() => {});
  return { readable: incoming.readable, writable: outgoing.writable };
}

/**
 * A failure timer for the whole run: it reports the step that was in progress and exits
 * non-zero. It never paces the flow (every step waits on a message, not on time).
 */
export function watchdog(seconds, currentStep, onTimeout) {
  const timer = setTimeout(() => {
    onTimeout(new InteropFailure(`timed out after ${seconds}s during step: ${currentStep()}`));
  }, seconds * 1000);
  timer.unref();
  return timer;
}
