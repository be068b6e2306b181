/**
 * The web UI as the server sends it: precompressed twins chosen by
 * Accept-Encoding (br > gzip > identity, q=0 respected) that decompress to
 * the original byte for byte, never a stale or missing twin, HEAD alike; and
 * the app page's security headers on `/` and on a deep link
 * (docs/ui.md, "Security headers" and "Precompressed assets").
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const root = new URL('../..', import.meta.url).pathname;

/** A raw GET/HEAD (fetch would decode the body itself): status, headers and the bytes as sent. */
function raw(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Text that compresses like a bundle does (repetitive, not trivially). */
const bundle = (n: number) => Array.from({ length: n }, (_, i) => `export function f${i}(a){return a*${i}+"${(i * 7919).toString(36)}";}\n`).join('');

describe('web UI assets and the app page', () => {
  const ui = tempDir('filedock-ui-');
  let s: TestServer;
  const js = bundle(1500);
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Filedock</title><script type="module" src="/assets/app-1.js"></script></head><body><div id="root"></div>${'<!-- padding -->'.repeat(100)}</body></html>`;
  before(async () => {
    mkdirSync(join(ui.dir, 'assets'));
    writeFileSync(join(ui.dir, 'index.html'), html);
    writeFileSync(join(ui.dir, 'assets/app-1.js'), js);
    writeFileSync(join(ui.dir, 'assets/stale-1.js'), bundle(200));
    writeFileSync(join(ui.dir, 'assets/small-1.css'), 'body{margin:0}');
    const built = spawnSync(process.execPath, [join(root, 'scripts/precompress.mjs'), ui.dir], { encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    s = await startTestServer(
      { SERVICE_DOCSERVER_URL: 'https://docs.example.test:8443', SERVICE_DOCSERVER_JWT: 'jwt-secret-of-the-test' },
      { rendererDir: ui.dir },
    );
  });
  after(async () => {
    await s.close();
    ui.cleanup();
  });

  test('br, gzip and identity each decode to the original, with type, length, Vary and caching', async () => {
    const cases: Array<[string, string | undefined, (b: Buffer) => Buffer]> = [
      ['br', 'br', brotliDecompressSync],
      ['gzip, deflate, br, zstd', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
      ['br;q=0, gzip', 'gzip', gunzipSync],
      ['gzip;q=0.5, br;q=0.4', 'gzip', gunzipSync],
      ['br;q=0, gzip;q=0', undefined, (b) => b],
      ['identity', undefined, (b) => b],
      ['', undefined, (b) => b],
    ];
    for (const [accept, coding, decode] of cases) {
      const r = await raw(`${s.url}/assets/app-1.js`, accept ? { 'accept-encoding': accept } : {});
      assert.equal(r.status, 200, accept);
      assert.equal(r.headers['content-encoding'], coding, accept);
      assert.equal(r.headers['content-type'], 'text/javascript; charset=utf-8', accept);
      assert.equal(Number(r.headers['content-length']), r.body.length, accept);
      assert.match(String(r.headers.vary), /Accept-Encoding/i, accept);
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable', accept);
      assert.ok(decode(r.body).equals(Buffer.from(js)), `${accept}: the bytes decode to the original`);
      if (coding) assert.ok(r.body.length < js.length / 2, `${accept}: smaller than the original`);
    }
  });

  test('HEAD answers the headers of the representation GET would send, without a body', async () => {
    const get = await raw(`${s.url}/assets/app-1.js`, { 'accept-encoding': 'br' });
    const head = await raw(`${s.url}/assets/app-1.js`, { 'accept-encoding': 'br' }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-encoding'], 'br');
    assert.equal(head.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(Number(head.headers['content-length']), get.body.length);
    assert.equal(head.body.length, 0);
    const page = await raw(`${s.url}/files/deep`, {}, 'HEAD');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(Number(page.headers['content-length']), Buffer.byteLength(html));
  });

  test('the app page is precompressed too, at / and as the fallback of a deep link', async () => {
    for (const path of ['/', '/files/Shared/some/folder', '/index.html']) {
      const r = await raw(s.url + path, { 'accept-encoding': 'gzip, br' });
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['content-encoding'], 'br', path);
      assert.equal(r.headers['cache-control'], 'no-cache', path);
      assert.equal(brotliDecompressSync(r.body).toString(), html, path);
    }
  });

  test('a changed original or a missing twin is sent as the original, never as stale bytes', async () => {
    const path = join(ui.dir, 'assets/stale-1.js');
    const edited = readFileSync(path, 'utf8').replace('f1(', 'g1(');
    writeFileSync(path, edited);
    const r = await raw(`${s.url}/assets/stale-1.js`, { 'accept-encoding': 'br, gzip' });
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(r.body.toString(), edited);
    rmSync(join(ui.dir, 'assets/app-1.js.br'));
    const gz = await raw(`${s.url}/assets/app-1.js`, { 'accept-encoding': 'br, gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip', 'the br twin gone: the next accepted one');
    assert.ok(gunzipSync(gz.body).equals(Buffer.from(js)));
    writeFileSync(join(ui.dir, 'assets/app-1.js.gz'), 'truncated');
    const none = await raw(`${s.url}/assets/app-1.js`, { 'accept-encoding': 'br, gzip' });
    assert.equal(none.headers['content-encoding'], undefined, 'a twin of the wrong size is not sent');
    assert.ok(none.body.equals(Buffer.from(js)));
  });

  test('small files have no twin and go out as they are', async () => {
    const r = await raw(`${s.url}/assets/small-1.css`, { 'accept-encoding': 'br, gzip' });
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(r.headers.vary, undefined);
    assert.equal(r.body.toString(), 'body{margin:0}');
  });

  test('the app page carries a strict policy, COOP, nosniff and a same-origin referrer policy, at / and on a deep link', async () => {
    assert.equal((await s.api('PUT', '/api/admin/external/diagram', { token: await s.login(), body: { url: 'https://draw.example.test/app' } })).status, 200);
    for (const path of ['/', '/files/Shared/deep/path?view=grid']) {
      const r = await raw(s.url + path);
      const csp = String(r.headers['content-security-policy']);
      const directive = (name: string) =>
        csp
          .split(';')
          .map((d) => d.trim())
          .find((d) => d.startsWith(`${name} `));
      assert.equal(directive('script-src'), "script-src 'self' 'wasm-unsafe-eval' https://docs.example.test:8443", path);
      assert.equal(directive('object-src'), "object-src 'none'");
      assert.equal(directive('base-uri'), "base-uri 'none'");
      assert.equal(directive('form-action'), "form-action 'self'");
      assert.equal(directive('frame-ancestors'), "frame-ancestors 'none'");
      assert.equal(directive('frame-src'), "frame-src 'self' blob: https://docs.example.test:8443 https://draw.example.test");
      assert.doesNotMatch(csp, /'unsafe-eval'|script-src[^;]*unsafe-inline/);
      assert.equal(r.headers['cross-origin-opener-policy'], 'same-origin');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['referrer-policy'], 'same-origin');
      assert.equal(r.headers['x-frame-options'], 'DENY');
    }
    // Assets are not pages: no page policy on them.
    assert.equal((await raw(`${s.url}/assets/app-1.js`)).headers['content-security-policy'], undefined);
  });

  test('the built app page has no inline script (the policy would block it)', () => {
    const built = readFileSync(join(root, 'dist/renderer/index.html'), 'utf8');
    const scripts = [...built.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.ok(scripts.length > 0);
    for (const [, attrs, body] of scripts) {
      assert.match(attrs, /\bsrc=/, 'every script is a file');
      assert.equal(body.trim(), '');
    }
  });
});
