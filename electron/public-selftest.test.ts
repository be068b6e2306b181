import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import { join } from 'node:path';
import { tempDir } from '../test/helpers/tools';
import { publicSelfTest } from './public-selftest';
import { ServerHost } from './server-host';
import { forkServer, realServer, serverEnv, TEST_READY_MS } from './fixtures/server-process';

const listen = async (s: Server) => {
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
};

/** A public-links-only listener as the spec wants it: share pages, nothing else. */
const publicListener = () =>
  createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/s/')) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Link not found · Filedock</title><p>This link does not exist.</p>');
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not_found"}');
    }
  });

/** A tunnel on loopback: forwards to `target`, optionally refusing big bodies or shifting the Date header. */
const tunnel = (target: () => string, o: { maxBody?: number; skewMs?: number } = {}) =>
  createServer((req, res) => {
    if (o.maxBody && Number(req.headers['content-length'] ?? 0) > o.maxBody) {
      req.resume();
      res.writeHead(413, { connection: 'close' }).end('Payload Too Large');
      return;
    }
    const up = request(target() + req.url, { method: req.method, headers: req.headers }, (r) => {
      const headers = { ...r.headers };
      if (o.skewMs) headers.date = new Date(Date.now() + o.skewMs).toUTCString();
      res.writeHead(r.statusCode ?? 502, headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });

describe('public links self-test', () => {
  const servers: Server[] = [];
  const start = async (s: Server) => (servers.push(s), listen(s));
  after(() => servers.forEach((s) => s.close()));
  let pub = '';
  before(async () => {
    pub = await start(publicListener());
  });

  test('a tunnel to the public listener passes every check', async () => {
    const url = await start(tunnel(() => pub));
    const r = await publicSelfTest({ publicUrl: url, localPublicUrl: pub, bodyBytes: 1 << 20 });
    assert.deepEqual(
      r.checks.map((c) => [c.id, c.ok]),
      [
        ['share-route', true],
        ['admin-refused', true],
        ['login-refused', true],
        ['clock-skew', true],
        ['body-limit', true],
      ],
    );
    assert.equal(r.ok, true);
  });

  test('a body cap below the chunk size and a skewed clock are reported', async () => {
    const url = await start(tunnel(() => pub, { maxBody: 512 * 1024, skewMs: 5 * 60_000 }));
    const r = await publicSelfTest({ publicUrl: url, localPublicUrl: pub, bodyBytes: 1 << 20 });
    const by = Object.fromEntries(r.checks.map((c) => [c.id, c]));
    assert.equal(by['body-limit'].ok, false);
    assert.match(by['body-limit'].detail, /413/);
    assert.equal(by['clock-skew'].ok, false);
    assert.match(by['clock-skew'].detail, /by (299|300) s/);
    assert.equal(r.ok, false);
  });

  test('an unreachable public URL fails without throwing', async () => {
    const r = await publicSelfTest({ publicUrl: 'http://127.0.0.1:9', localPublicUrl: pub, bodyBytes: 1024, timeoutMs: 2000 });
    assert.equal(r.ok, false);
    assert.ok(r.checks.every((c) => !c.ok));
  });

  test(`a tunnel pointed at the main port of the ${realServer ? 'real server' : 'stand-in'} fails: sign-in is reachable`, async () => {
    const tmp = tempDir('filedock-selftest-');
    const host = new ServerHost({ fork: forkServer, env: () => serverEnv(join(tmp.dir, 'data')), readyTimeoutMs: TEST_READY_MS });
    try {
      const { port } = await host.start();
      const url = await start(tunnel(() => `http://127.0.0.1:${port}`));
      const r = await publicSelfTest({ publicUrl: url, localPublicUrl: pub, bodyBytes: 1024 });
      const by = Object.fromEntries(r.checks.map((c) => [c.id, c]));
      assert.equal(by['login-refused'].ok, false, by['login-refused'].detail);
      assert.match(by['login-refused'].detail, /reachable from the public URL/);
      assert.equal(r.ok, false);
    } finally {
      await host.stop();
      tmp.cleanup();
    }
  });
});
