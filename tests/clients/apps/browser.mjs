// Shows an MCP App in a real browser: bundles `host.mjs` (the official client and host-side
// bridge) with esbuild, serves it on 127.0.0.1, and drives Debian's Chromium (headless, through
// playwright-core and the DevTools protocol) to the host page once per language. For each it
// waits for the view to show the tool's result, reads what the view shows, and writes a
// screenshot.
//
// usage: node browser.mjs SERVER_URL TOOL ARGUMENTS_JSON OUT_DIR LANG...
// env:   MCP_TEST_APPS_DIR  the npm prefix holding ext-apps, client, esbuild, playwright-core
//        MCP_TEST_CHROMIUM  the Chromium binary (default /usr/bin/chromium)
// Prints one JSON line: {"<lang>": {"host": ..., "view": ..., "screenshot": ...}, ...}.
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [server, tool, args, outDir, ...languages] = process.argv.slice(2);
const appsDir = process.env.MCP_TEST_APPS_DIR;
if (!appsDir) throw new Error("MCP_TEST_APPS_DIR is not set");
const require = createRequire(join(appsDir, "package.json"));
const esbuild = require("esbuild");
const { chromium } = require("playwright-core");
const here = dirname(fileURLToPath(import.meta.url));

const bundle = await esbuild.build({
  entryPoints: [join(here, "host.mjs")],
  bundle: true,
  write: false,
  format: "esm",
  platform: "browser",
  nodePaths: [join(appsDir, "node_modules")],
  logLevel: "error",
});
const script = bundle.outputFiles[0].text;
const page = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>MCP Apps host</title></head>
<body style="font-family: sans-serif; margin: 16px"><script type="module" src="/host.js"></script></body></html>`;
const http = createServer((req, res) => {
  const [type, body] = req.url.startsWith("/host.js")
    ? ["text/javascript", script]
    : ["text/html; charset=utf-8", page];
  res.writeHead(200, { "content-type": type, "cache-control": "no-store" });
  res.end(body);
});
await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${http.address().port}`;

const browser = await chromium.launch({
  executablePath: process.env.MCP_TEST_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // This machine has no network but loopback: Chromium's own background traffic only fails.
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
mkdirSync(outDir, { recursive: true });
const seen = {};
try {
  for (const lang of languages) {
    const context = await browser.newContext({ locale: lang, viewport: { width: 480, height: 240 } });
    const tab = await context.newPage();
    const errors = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    const query = new URLSearchParams({ server, tool, arguments: args });
    await tab.goto(`${origin}/?${query}`);
    const host = await tab.evaluate(() => window.hostDone);
    if (!host.ok) throw new Error(`host page failed in ${lang}: ${host.error}`);
    const view = tab.frameLocator("#app");
    // The view fills in the number with the product: then it has shown the result.
    await view.locator("#number").filter({ hasText: /\d/ }).waitFor({ timeout: 15000 });
    const text = async (selector) => (await view.locator(selector).textContent()).trim();
    const screenshot = join(outDir, `app-${lang}.png`);
    await tab.screenshot({ path: screenshot });
    seen[lang] = {
      host: host.seen,
      view: {
        lang: await view.locator("html").getAttribute("lang"),
        label: await text(".label"),
        name: await text("#name"),
        number: await text("#number"),
      },
      errors,
      screenshot,
    };
    await context.close();
  }
} finally {
  await browser.close();
  http.close();
}
console.log(JSON.stringify(seen));
