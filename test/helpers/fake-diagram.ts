/**
 * A fake diagram editor on loopback that speaks draw.io's embed protocol
 * (`?embed=1&proto=json`) the way draw.io does (no real draw.io runs here):
 *   - once loaded it posts `{event: 'init'}` (a JSON string) to its parent;
 *   - `{action: 'load', xml}` (or `xmlpng`: a PNG data URI carrying the
 *     diagram in its `mxfile` tEXt chunk) loads a diagram and answers
 *     `{event: 'load', xml}`;
 *   - `{action: 'export', format: 'xmlsvg'|'xmlpng'|'svg'|'png', xml?}`
 *     answers `{event: 'export', format, message, data: <data URI>, xml}`, the
 *     image embedding the diagram (SVG `content` attribute, PNG tEXt chunk);
 *   - the test drives the "user" inside the frame through `window.fake`:
 *     `edit(label)` adds a cell, `autosave()`, `save(exit?)` and `exit()` post
 *     `{event: 'autosave'|'save', xml[, exit]}` / `{event: 'exit', modified}`;
 *     `goForeign()` navigates the frame to another origin (`localhost`
 *     instead of `127.0.0.1`, same port) whose page posts a forged save.
 * `GET /healthcheck` answers 200 like a draw.io server's static file would.
 */
import { createServer, type Server } from 'node:http';

/** CRC-32 (PNG chunks). Plain JS over Uint8Array: also serialised into the fake page. */
export function crc32(bytes: Uint8Array): number {
  let c = -1;
  for (let i = 0; i < bytes.length; i++) {
    c ^= bytes[i];
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return (c ^ -1) >>> 0;
}

/** A PNG with a tEXt chunk `key` = `encodeURIComponent(text)` after IHDR (how draw.io embeds `mxfile`). */
export function pngWithText(png: Uint8Array, key: string, text: string): Uint8Array {
  const data = new TextEncoder().encode(key + '\0' + encodeURIComponent(text));
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  chunk.set(new TextEncoder().encode('tEXt'), 4);
  chunk.set(data, 8);
  view.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)));
  const at = 8 + 25; // signature + IHDR
  const out = new Uint8Array(png.length + chunk.length);
  out.set(png.subarray(0, at));
  out.set(chunk, at);
  out.set(png.subarray(at), at + chunk.length);
  return out;
}

/** The text of tEXt chunk `key`, or null. */
export function pngText(png: Uint8Array, key: string): string | null {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  for (let at = 8; at + 12 <= png.length; ) {
    const len = view.getUint32(at);
    const type = new TextDecoder().decode(png.subarray(at + 4, at + 8));
    if (type === 'tEXt') {
      const body = new TextDecoder().decode(png.subarray(at + 8, at + 8 + len));
      const nul = body.indexOf('\0');
      if (body.slice(0, nul) === key) return decodeURIComponent(body.slice(nul + 1));
    }
    at += 12 + len;
  }
  return null;
}

/** A 1x1 PNG. */
export const TINY_PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64'));

/** The XML embedded in a .drawio.svg (its root `content` attribute, unescaped). */
export function svgContent(svg: string): string | null {
  const m = /<svg\b[^>]*\scontent="([^"]*)"/.exec(svg);
  return m
    ? m[1]
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&#10;/g, '\n')
        .replace(/&amp;/g, '&')
    : null;
}

/** An SVG image embedding `xml` the way draw.io's "editable SVG" does. */
export function svgWithDiagram(xml: string, label = ''): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40" content="${esc(xml)}"><rect width="120" height="40" fill="#dae8fc"/><text x="6" y="24">${esc(label)}</text></svg>`;
}

const PAGE = (foreign: string) => `<!doctype html><html><head><meta charset="utf-8"><title>fake diagram editor</title></head>
<body><h1>fake diagram editor</h1><pre id="xml"></pre><script>
var __name = function (f) { return f; };
${crc32.toString()}
${pngWithText.toString()}
${pngText.toString()}
${svgWithDiagram.toString()}
var TINY = Uint8Array.from(atob(${JSON.stringify(Buffer.from(TINY_PNG).toString('base64'))}), function (c) { return c.charCodeAt(0); });
var b64 = function (bytes) { var s = ''; for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]); return btoa(s); };
var fromDataUri = function (uri) { return Uint8Array.from(atob(uri.slice(uri.indexOf(',') + 1)), function (c) { return c.charCodeAt(0); }); };
var post = function (msg) { parent.postMessage(JSON.stringify(msg), '*'); };
var fake = window.fake = { received: [], xml: null, edits: 0, modified: false,
  show: function () { document.getElementById('xml').textContent = fake.xml; },
  edit: function (label) {
    fake.edits++;
    var cell = '<mxCell id="fake-' + fake.edits + '" value="' + label + '" vertex="1" parent="1"><mxGeometry x="' + (20 * fake.edits) + '" y="20" width="120" height="40" as="geometry"/></mxCell>';
    fake.xml = fake.xml && fake.xml.indexOf('</root>') >= 0 ? fake.xml.replace('</root>', cell + '</root>')
      : '<mxfile host="fake"><diagram id="p1" name="Page-1"><mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>' + cell + '</root></mxGraphModel></diagram></mxfile>';
    fake.modified = true; fake.show(); return fake.xml;
  },
  autosave: function () { post({ event: 'autosave', xml: fake.xml }); },
  save: function (exit) { var m = { event: 'save', xml: fake.xml }; if (exit) m.exit = true; fake.modified = false; post(m); },
  exit: function () { post({ event: 'exit', modified: fake.modified }); },
  goForeign: function () { location.href = ${JSON.stringify(foreign)}; }
};
window.addEventListener('message', function (e) {
  if (e.source !== parent || typeof e.data !== 'string') return;
  var msg; try { msg = JSON.parse(e.data); } catch (err) { return; }
  fake.received.push(msg);
  if (msg.action === 'load') {
    fake.xml = msg.xmlpng ? pngText(fromDataUri(msg.xmlpng), 'mxfile') : (msg.xml || '');
    fake.title = msg.title; fake.autosaveOn = msg.autosave == 1; fake.show();
    post({ event: 'load', xml: fake.xml, scale: 1 });
  } else if (msg.action === 'export') {
    var xml = msg.xml != null ? msg.xml : fake.xml, data;
    if (msg.format === 'xmlsvg' || msg.format === 'svg') data = 'data:image/svg+xml;base64,' + b64(new TextEncoder().encode(svgWithDiagram(msg.format === 'xmlsvg' ? xml : '', 'edited')));
    else if (msg.format === 'xmlpng' || msg.format === 'png') data = 'data:image/png;base64,' + b64(msg.format === 'xmlpng' ? pngWithText(TINY, 'mxfile', xml) : TINY);
    else return post({ event: 'export', format: msg.format, message: msg, error: 'unsupported format' });
    post({ event: 'export', format: msg.format, message: msg, data: data, xml: xml });
  }
});
var q = new URLSearchParams(location.search);
if (q.get('embed') === '1' && q.get('proto') === 'json') post({ event: 'init' });
else document.body.append('not in embed mode: ?embed=1&proto=json expected');
</script></body></html>`;

/** The foreign origin's page: it tries to pass off a save and an exit as the editor's. */
const FOREIGN = `<!doctype html><html><body><p>foreign page</p><script>
parent.postMessage(JSON.stringify({ event: 'save', xml: '<mxfile><diagram>forged</diagram></mxfile>' }), '*');
parent.postMessage(JSON.stringify({ event: 'autosave', xml: '<mxfile><diagram>forged</diagram></mxfile>' }), '*');
parent.postMessage(JSON.stringify({ event: 'exit', modified: false }), '*');
window.foreignPosted = true;
</script></body></html>`;

export class FakeDiagram {
  /** The editor's base URL (what an admin configures), `http://127.0.0.1:<port>/drawio`. */
  url = '';
  /** Requests served, for assertions (`/drawio?embed=1&proto=json...`). */
  requests: string[] = [];
  private server!: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      this.requests.push(req.url ?? '');
      const port = (this.server.address() as { port: number }).port;
      if (u.pathname === '/healthcheck') return res.writeHead(200, { 'Content-Type': 'text/plain' }).end('OK');
      if (u.pathname === '/foreign') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(FOREIGN);
      if (u.pathname === '/drawio' || u.pathname.startsWith('/drawio/'))
        return res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(PAGE(`http://localhost:${port}/foreign`));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/drawio`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
