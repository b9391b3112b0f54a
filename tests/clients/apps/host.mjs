// A web host of MCP Apps, as small as a host can be: it connects to an MCP server over
// Streamable HTTP with the official client, calls a tool, reads the app its `_meta.ui` names,
// and shows the app in a sandboxed iframe through the official host-side bridge
// (`@modelcontextprotocol/ext-apps/app-bridge`), which hands the view the call's input and
// result. Bundled for the browser by `browser.mjs`; the page's query says what to call.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const query = new URLSearchParams(location.search);
const server = query.get("server");
const toolName = query.get("tool");
const args = JSON.parse(query.get("arguments") || "{}");
const host = { name: "apps-browser-test", version: "1.0.0" };

async function main() {
  const client = new Client(host, {
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(server)));
  const ui = client.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/ui"];
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === toolName);
  if (!tool) throw new Error(`no tool ${toolName}`);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`tool ${toolName} names no app`);
  const result = await client.callTool({ name: toolName, arguments: args });
  const read = await client.readResource({ uri });
  const page = read.contents[0];
  if (page.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`app MIME type ${page.mimeType}`);

  const iframe = document.createElement("iframe");
  // An opaque origin: the view runs scripts but reaches neither this page nor its storage.
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.id = "app";
  iframe.style.cssText = "width: 420px; height: 160px; border: 1px solid #ccc; border-radius: 8px";
  document.body.append(iframe);

  const bridge = new AppBridge(client, host, { serverTools: {}, serverResources: {}, logging: {} }, {
    hostContext: { locale: navigator.language, theme: "light", platform: "web", displayMode: "inline" },
  });
  const shown = new Promise((resolve) => {
    bridge.oninitialized = async () => {
      await bridge.sendToolInput({ arguments: args });
      await bridge.sendToolResult(result);
      resolve();
    };
  });
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${height}px`;
  };
  // The bridge listens before the view's first message can be sent.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = page.text;
  await shown;
  return {
    extension: ui ?? null,
    protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null,
    tool: { name: tool.name, _meta: tool._meta ?? null },
    resource: { uri: page.uri, mimeType: page.mimeType, _meta: page._meta ?? null },
    structuredContent: result.structuredContent ?? null,
  };
}

window.hostDone = main().then(
  (seen) => ({ ok: true, seen }),
  (e) => ({ ok: false, error: String(e && e.stack ? e.stack : e) }),
);
