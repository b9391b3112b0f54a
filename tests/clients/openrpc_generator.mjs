// Feeds the example's OpenRPC document to the ecosystem's tools: `@open-rpc/generator` 2.1.1 and
// the `@open-rpc/schema-utils-js` it validates with. The document as served must pass the
// OpenRPC meta-schema (its `servers[0].url` absolute); its `?unroll` form must be generated
// into a TypeScript client (the generator expands every `$ref` and cannot stop at a recursive
// schema: open-rpc/generator#720).
// usage: node openrpc_generator.mjs RPC_URL OUT_DIR   (MCP_TEST_OPENRPC_DIR holds the packages)
// Prints one JSON line; exits non-zero on the first failed check.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const top = createRequire(process.env.MCP_TEST_OPENRPC_DIR + "/package.json");
const generate = top("@open-rpc/generator").default;
// The validator the generator itself uses, wherever npm put it.
const beside = createRequire(top.resolve("@open-rpc/generator"));
const { validateOpenRPCDocument } = beside("@open-rpc/schema-utils-js");

function check(cond, what) {
  if (!cond) throw new Error(what);
}

const [rpcUrl, outDir] = process.argv.slice(2);
async function documentAt(query) {
  const r = await fetch(rpcUrl + query);
  check(r.ok, `GET ${query}: ${r.status}`);
  return r.json();
}
const served = await documentAt("");
const unrolled = await documentAt("?unroll");
const valid = (doc) => {
  const v = validateOpenRPCDocument(JSON.parse(JSON.stringify(doc)));
  return v === true ? true : String(v.message ?? v).slice(0, 500);
};
const seen = {
  url: served.servers[0].url,
  valid: valid(served),
  unrolledValid: valid(unrolled),
  recursive: Object.keys(served.components.schemas).filter((k) => !(k in unrolled.components.schemas)),
};
await generate({
  openrpcDocument: JSON.parse(JSON.stringify(unrolled)),
  outDir,
  components: [{ type: "client", language: "typescript", name: "catalog" }],
});
const client = readFileSync(outDir + "/client/typescript/src/index.ts", "utf8");
seen.generated = unrolled.methods
  .map((m) => m.name)
  .filter((name) => client.includes(`this.request("${name}"`));
console.log(JSON.stringify(seen));
