// Drives the example `catalog` service with the official TypeScript SDK client (1.32.x).
// usage: node ts_client.mjs URL    (NODE_PATH must hold @modelcontextprotocol/sdk)
// Prints one JSON line; exits non-zero on the first failed check.
import { createRequire } from "node:module";
const require = createRequire(process.env.MCP_TEST_NPM_DIR + "/node_modules/");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function check(cond, what) {
  if (!cond) throw new Error(what);
}

const url = new URL(process.argv[2]);
const client = new Client({ name: "ts-peer", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(url));
const seen = { protocolVersion: client.getServerVersion() && client.transport.protocolVersion };
const { tools } = await client.listTools();
seen.tools = tools.map((t) => t.name);
check(JSON.stringify(seen.tools) === JSON.stringify([...seen.tools].sort()), "tools are sorted");
// callTool validates structuredContent against outputSchema with Ajv.
let r = await client.callTool({ name: "Catalog.search", arguments: { query: "mug", limit: 2 } });
check(!r.isError, "search failed");
check(JSON.stringify(r.structuredContent) === JSON.stringify({ result: [{ id: 5, name: "Mug rack" }, { id: 1, name: "Red mug" }] }), "search result");
r = await client.callTool({ name: "Catalog.tree", arguments: {} });
check(r.structuredContent.result.name === "All", "tree result");
r = await client.callTool({ name: "Catalog.get", arguments: { id: 99 } });
check(r.isError === true, "get 99 is a tool error");
let code = null;
try {
  await client.callTool({ name: "Nope.nothing", arguments: {} });
} catch (e) {
  code = e.code;
}
check(code === -32602, `unknown tool gives -32602, got ${code}`);
const progress = [];
r = await client.callTool({ name: "Jobs.run", arguments: { steps: 3, step_ms: 10 } }, undefined, {
  onprogress: (p) => progress.push(p.progress),
});
check(JSON.stringify(progress) === "[1,2,3]", `progress ${JSON.stringify(progress)}`);
seen.progress = progress;
// The MCP App: the tool's link, the page listed and read with its `_meta.ui`.
const get = tools.find((t) => t.name === "Catalog.get");
const { resources } = await client.listResources();
const card = resources.find((x) => x.uri === "ui://catalog/product-card");
check(card !== undefined, "the app resource is listed");
const page = (await client.readResource({ uri: card.uri })).contents[0];
check(page.text.startsWith("<!DOCTYPE html>"), "the app page is HTML");
seen.app = {
  extension: client.getServerCapabilities().extensions?.["io.modelcontextprotocol/ui"] ?? null,
  tool: get._meta ?? null,
  resource: { mimeType: card.mimeType, _meta: card._meta ?? null },
  read: { mimeType: page.mimeType, _meta: page._meta ?? null },
};
// The language of each request (SEP-2792): `_meta` carries it, the answer names it. This SDK
// does not mirror it into `Accept-Language` as the SEP asks of clients, and Node's fetch sends
// `Accept-Language: *` of its own: the two disagree, and the server refuses (400, -32020).
const asked = { "io.modelcontextprotocol/acceptLanguage": "uk" };
let refused = null;
try {
  await client.readResource({ uri: card.uri, _meta: asked });
} catch (e) {
  refused = { status: e.code ?? null, mismatch: String(e.message).includes("-32020") };
}
await client.close();
// A client that sends the header the SEP asks for, equal to `_meta`.
const uk = new Client({ name: "ts-peer-uk", version: "1.0.0" });
await uk.connect(
  new StreamableHTTPClientTransport(url, { requestInit: { headers: { "Accept-Language": "uk" } } }),
);
const inUk = await uk.readResource({ uri: card.uri, _meta: asked });
const ping = await uk.callTool({ name: "Catalog.ping", arguments: { who: "Olena" }, _meta: asked });
seen.language = {
  refused,
  read: inUk._meta?.["io.modelcontextprotocol/contentLanguage"] ?? null,
  page: inUk.contents[0].text.includes('<html lang="uk">'),
  call: ping._meta?.["io.modelcontextprotocol/contentLanguage"] ?? null,
};
await uk.close();
console.log(JSON.stringify(seen));
