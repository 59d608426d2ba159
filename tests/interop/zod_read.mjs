// The reference reader of the differential test (tests/generated/test_differential.py): reads a batch of
// JSON texts with the TypeScript SDK's own zod schemas, as its runtime does for every message.
//
//   node tests/interop/zod_read.mjs < cases.json > outcomes.json
//
// The SDK keeps its zod schemas in dist/v1/schema/zod.gen.js (the stable build, which its
// stable entry point imports as `validate`) and dist/v1/unstable/schema/zod.gen.js (the
// unstable one); each `$defs` entry X of the JSON schema is the export `zX`. The package's
// export map does not list these files, so they are imported by path, as wire.mjs does.
//
// stdin:  {"cases": [[build, typeName, jsonText], ...]}   build: "stable" | "unstable"
// stdout: [[status, detail], ...], one per case, in order:
//         ["ok", jsonTextOfTheParsedValue] | ["rejected", issues] | ["crashed", message]
// `JSON.parse` reads the text first, as the SDK's transport does (numbers become doubles).

import * as z from "zod/v4";
import * as stable from "./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";
import * as unstable from "./node_modules/@agentclientprotocol/sdk/dist/v1/unstable/schema/zod.gen.js";

// The schema's top-level message unions, which the SDK reads envelope by envelope and has no zod
// schema of: each side's outgoing messages, the protocol-level notification and the root, as the
// schema's root gives them (tests/support/differential/cases.py: schema), made of the SDK's own envelopes.
function withTopLevel(build) {
  const sides = ["Agent", "Client", "Proxy"].filter((side) => build[`z${side}Request`] !== undefined);
  const unions = Object.fromEntries(
    sides.map((side) => [
      `z${side}OutgoingMessage`,
      z.union([build[`z${side}Request`], build[`z${side}Response`], build[`z${side}Notification`]]),
    ]),
  );
  const zProtocolLevelMessage = z.object({
    method: z.string(),
    params: z.union([build.zCancelRequestNotification]).nullish(),
  });
  const members = [unions.zAgentOutgoingMessage, unions.zClientOutgoingMessage, zProtocolLevelMessage];
  if (unions.zProxyOutgoingMessage !== undefined) members.push(unions.zProxyOutgoingMessage);
  return { ...build, ...unions, zProtocolLevelMessage, zAcpMessage: z.union(members) };
}

const builds = { stable: withTopLevel(stable), unstable: withTopLevel(unstable) };

// Every leaf issue of a rejection, as "path: message": a union's issue holds the issues of each
// of its branches, and the one that tells why (an invalid URL) is often among those.
function leaves(issues, prefix = []) {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...(issue.path ?? [])];
    if (issue.code === "invalid_union" && Array.isArray(issue.errors) && issue.errors.length > 0) {
      return issue.errors.flatMap((branch) => leaves(branch, path));
    }
    return [`${path.join(".")}: ${issue.message}`];
  });
}

function readOne([build, typeName, text]) {
  const schema = builds[build]?.[`z${typeName}`];
  if (schema === undefined) return ["crashed", `no zod schema z${typeName} in the ${build} build`];
  try {
    const result = schema.safeParse(JSON.parse(text));
    if (!result.success) return ["rejected", [...new Set(leaves(result.error.issues))].join("; ")];
    return ["ok", JSON.stringify(result.data) ?? "null"];
  } catch (error) {
    return ["crashed", String(error?.stack ?? error)];
  }
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { cases } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
process.stdout.write(JSON.stringify(cases.map(readOne)));
