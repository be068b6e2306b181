/**
 * The listeners' timeouts and caps (server/http/listener.ts), with short
 * values set through the config: a slowloris client is gone within the
 * header timeout, a stalled body within the inactivity timeout, a slow but
 * steady upload is never cut, nor an answer the server is slow to make, and
 * the public listener caps connections per address.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { Listeners } from '../../server/http/listener';
import { tempDir, freePort } from '../helpers/tools';

/** Resolves with how long (ms) until the server closed `sock`, and what it sent. */
const closedAfter = (sock: Socket, t0: number) =>
  new Promise<{ ms: number; got: string }>((resolve) => {
    let got = '';
    sock.on('data', (d) => (got += d));
    sock.on('error', () => undefined);
    sock.on('close', () => resolve({ ms: performance.now() - t0, got }));
  });

const open = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });

describe('listener timeouts', () => {
  let s: TestServer;
  let admin: string;
  let root: { dir: string; cleanup: () => void };
  let publicPort: number;

  before(async () => {
    root = tempDir('filedock-listener-');
    publicPort = await freePort();
    s = await startTestServer({
      SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
      SERVICE_DEFAULT_STORAGE_PATH: root.dir,
      SERVICE_DEFAULT_STORAGE_NAME: 'Files',
      SERVICE_HTTP_HEADERS_TIMEOUT: '1s',
      SERVICE_HTTP_IDLE_TIMEOUT: '1s',
      SERVICE_PUBLIC_LISTEN: `127.0.0.1:${publicPort}`,
      SERVICE_PUBLIC_MAX_CONNECTIONS_PER_IP: '3',
    });
    admin = await s.login();
  });
  after(async () => {
    await s.close();
    root.cleanup();
  });

  test('a slowloris client (headers trickling in) is closed within the header timeout', async () => {
    const t0 = performance.now();
    const sock = await open(s.server.port);
    const done = closedAfter(sock, t0);
    sock.write('GET /api/capabilities HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => sock.writable && sock.write(`X-Drip-${Date.now()}: 1\r\n`), 200);
    const { ms, got } = await Promise.race([done, new Promise<never>((_, rej) => setTimeout(() => rej(new Error('still open after 5 s')), 5000))]).finally(() =>
      clearInterval(drip),
    );
    // 1 s of header time plus at most one check interval (250 ms here; 1 s at the 20 s default).
    assert.ok(ms >= 900 && ms < 2500, `closed after ${ms.toFixed(0)} ms`);
    assert.match(got, /^HTTP\/1\.1 408/);
  });

  test('a request body that stops moving is closed after the inactivity timeout', async () => {
    const t0 = performance.now();
    const sock = await open(s.server.port);
    const done = closedAfter(sock, t0);
    sock.write(
      `POST /api/files/mkdir HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"pa`,
    );
    const { ms } = await Promise.race([done, new Promise<never>((_, rej) => setTimeout(() => rej(new Error('still open after 5 s')), 5000))]);
    assert.ok(ms >= 900 && ms < 3000, `closed after ${ms.toFixed(0)} ms`);
  });

  test('a slow but steady upload, longer than every timeout, is not cut', async () => {
    const boundary = 'fdtest' + Date.now();
    const chunks = Array.from({ length: 12 }, (_, i) => Buffer.alloc(1024, 97 + i));
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${s.url}/api/files/upload`,
        { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': `multipart/form-data; boundary=${boundary}` } },
        (r) => {
          let body = '';
          r.on('data', (d) => (body += d));
          r.on('end', () => resolve({ status: r.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.write(
        `--${boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\n/Files\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      let i = 0;
      // 12 chunks, one every 300 ms: 3.6 s in all, over three times the header and inactivity bounds.
      const tick = setInterval(() => {
        if (i < chunks.length) return void req.write(chunks[i++]);
        clearInterval(tick);
        req.end(`\r\n--${boundary}--\r\n`);
      }, 300);
    });
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(readFileSync(join(root.dir, 'slow.bin')), Buffer.concat(chunks));
  });

  test('an answer the server takes longer than the inactivity timeout to make is not cut (the client is not stalling)', async () => {
    const listeners = new Listeners({ headersTimeoutMs: 1000, idleTimeoutMs: 1000, keepAliveTimeoutMs: 1000 });
    const slow = listeners.create((_req, res) => void setTimeout(() => res.end('made'), 1800));
    const port = await slow.listen(0, '127.0.0.1');
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(r.status, 200);
      assert.equal(await r.text(), 'made');
    } finally {
      await listeners.close(100);
    }
  });

  test('the public listener closes connections over the per-address cap at once', async () => {
    const held = await Promise.all([open(publicPort), open(publicPort), open(publicPort)]);
    try {
      const t0 = performance.now();
      const extra = await open(publicPort);
      const { ms, got } = await closedAfter(extra, t0);
      assert.ok(ms < 500, `closed after ${ms.toFixed(0)} ms`);
      assert.equal(got, '');
      // The three held connections still work.
      held[0].write(`GET /s/nope HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nConnection: close\r\n\r\n`);
      const { got: answer } = await closedAfter(held[0], t0);
      assert.match(answer, /^HTTP\/1\.1 404/);
    } finally {
      for (const h of held) h.destroy();
    }
    // Once they are gone, the address may connect again.
    await new Promise((r) => setTimeout(r, 100));
    const r = await fetch(`http://127.0.0.1:${publicPort}/s/nope`, { headers: { accept: 'application/json' } });
    assert.equal(r.status, 404);
  });
});
