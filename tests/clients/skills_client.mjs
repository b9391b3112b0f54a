// Drives the example's skills with the official TypeScript client 2 and its skills extension
// (`@modelcontextprotocol/client/ext/skills`, the host side of SEP-2640): lists them, gets one,
// and reads its files, which the client verifies against the entry (size, SHA-256 digest, and
// the frontmatter of SKILL.md).
// usage: node skills_client.mjs URL MODE    (MODE: legacy | auto; MCP_TEST_APPS_DIR holds the client)
// Prints one JSON line; exits non-zero on the first failed check.
import { createRequire } from "node:module";
const require = createRequire(process.env.MCP_TEST_APPS_DIR + "/package.json");
const { Client, StreamableHTTPClientTransport } = require("@modelcontextprotocol/client");
const { SkillsClient } = require("@modelcontextprotocol/client/ext/skills");

function check(cond, what) {
  if (!cond) throw new Error(what);
}

const [url, mode] = process.argv.slice(2);
const client = new Client({ name: "skills-peer", version: "1.0.0" }, { versionNegotiation: { mode } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const skills = new SkillsClient(client);
const seen = { protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null, supported: skills.supported };
const listing = await skills.list();
seen.uris = listing.skills.map((s) => s.uri);
seen.invalid = listing.invalid;
seen.cache = { ttlMs: listing.ttlMs ?? null, cacheScope: listing.cacheScope ?? null };
const shopping = listing.skills.find((s) => s.uri === "skill://catalog/shopping/SKILL.md");
check(shopping !== undefined, "the shopping skill is listed");
const got = await skills.get(shopping.uri);
check(JSON.stringify(got.skill) === JSON.stringify(shopping), "skills/get gives the listed entry");
// Read and verified: SKILL.md (size, digest, frontmatter) and a supporting file by its path.
const md = await skills.read(shopping);
const sizes = await skills.read(shopping, "references/sizes.md");
seen.files = [md, sizes].map((f) => ({ uri: f.uri, mimeType: f.mimeType, verified: f.verified, bytes: f.bytes.length }));
seen.frontmatter = md.frontmatter;
seen.heading = md.body.trim().split("\n")[0];
// A file the entry does not list is refused before any request.
try {
  await skills.read(shopping, "references/colours.md");
  seen.unlisted = "read";
} catch (e) {
  seen.unlisted = e.reason ?? String(e);
}
try {
  await skills.get("skill://catalog/nothing/SKILL.md");
  seen.unknown = "found";
} catch (e) {
  seen.unknown = e.code ?? String(e);
}
await client.close();
console.log(JSON.stringify(seen));
