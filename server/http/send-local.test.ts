import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { sendLocal, sendLocalRange, sendPool } from './send-local';
import { tempDir } from '../../test/helpers/tools';

const MiB = 1 << 20;

/**
 * A file of `size` random bytes and a real server whose every request sends
 * `?start..end` of it (the raw route's sender, without Koa); `get` fetches a range.
 */
async function fixture(t: TestContext, size: number): Promise<{ data: Buffer; get(start: number, end: number): Promise<Buffer> }> {
  const dir = tempDir();
  const data = randomBytes(size);
  const file = join(dir.dir, 'f.bin');
  writeFileSync(file, data);
  const { url, server } = await serve(file);
  t.after(() => (server.close(), dir.cleanup()));
  return { data, get: async (start, end) => Buffer.from(await (await fetch(`${url}?start=${start}&end=${end}`)).arrayBuffer()) };
}

async function serve(file: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    const start = Number(u.searchParams.get('start'));
    const end = Number(u.searchParams.get('end'));
    res.writeHead(200, { 'content-length': end - start + 1 });
    sendLocalRange(res, file, start, end).then(
      () => res.end(),
      () => res.destroy(),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, server };
}

test('small and large ranges come out byte-exact; a small file takes a buffer sized to it, not 2 MiB', async (t) => {
  const { data, get } = await fixture(t, 3 * MiB + 12345);

  const before = sendPool.idleBytes;
  assert.deepEqual(await get(0, 4095), data.subarray(0, 4096));
  // Only a 4 KiB buffer went through the pool for a 4 KiB file (the old sender allocated two 1 MiB buffers per request).
  assert.equal(sendPool.idleBytes - before, 4096);
  assert.deepEqual(await get(100, 100), data.subarray(100, 101));
  assert.deepEqual(await get(MiB - 10, MiB + 10), data.subarray(MiB - 10, MiB + 11));
  assert.deepEqual(await get(0, data.length - 1), data);
  assert.deepEqual(await get(5, 2 * MiB + 7), data.subarray(5, 2 * MiB + 8));
});

test('the pool reuses its buffers and keeps a bounded amount idle after a burst', async (t) => {
  const { data, get } = await fixture(t, 2 * MiB + 1);
  // 24 concurrent large sends need 48 MiB of buffers at once; afterwards the pool keeps at most 8 MiB of 1 MiB buffers.
  const bodies = await Promise.all(Array.from({ length: 24 }, () => get(0, data.length - 1)));
  for (const b of bodies) assert.ok(b.equals(data));
  assert.ok(sendPool.idleBytes <= 8 * MiB + 64 * 1024, `idle ${sendPool.idleBytes}`);
  const a = sendPool.take(MiB);
  sendPool.put(a);
  assert.equal(sendPool.take(MiB), a, 'a returned buffer is handed out again');
});

test('a missing file rejects before anything is written', async () => {
  const res = { destroyed: false, write: () => assert.fail('no write expected') } as never;
  await assert.rejects(sendLocalRange(res, '/nonexistent/file', 0, 10), { code: 'ENOENT' });
});

test('sendLocal: a small file leaves with its headers in one write; a client that left settles it with 0 bytes', async (t) => {
  const dir = tempDir();
  t.after(() => dir.cleanup());
  const file = join(dir.dir, 'small.bin');
  const data = randomBytes(5000);
  writeFileSync(file, data);
  const results: Array<Promise<number>> = [];
  const server = createServer((req, res) => {
    res.setHeader('content-length', data.length);
    results.push(sendLocal({ respond: true, status: 200, res } as never, file, 0, data.length - 1));
    if (req.url === '/leave') req.socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const body = Buffer.from(await (await fetch(`${url}/`)).arrayBuffer());
  assert.ok(body.equals(data));
  assert.equal(await results[0], 5000);
  await fetch(`${url}/leave`).catch(() => undefined);
  // A client gone before the end does not leave the request hanging.
  assert.equal(await Promise.race([results[1], new Promise((r) => setTimeout(() => r('hung'), 2000))]), 0);
});

test('clients that leave while their socket is full: every send ends, its descriptor is closed and the pool holds nothing for it', async (t) => {
  const dir = tempDir();
  t.after(() => dir.cleanup());
  const file = join(dir.dir, 'big.bin');
  const size = 16 * MiB;
  writeFileSync(file, randomBytes(size));
  const fds = () => readdirSync('/proc/self/fd').length;
  const sends: Array<Promise<number>> = [];
  const server = createServer((_req, res) => {
    res.setHeader('content-length', size);
    sends.push(sendLocal({ respond: true, status: 200, res, state: {} } as never, file, 0, size - 1));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const heldBefore = sendPool.heldBytes;
  const fdsBefore = fds();
  // Readers that never read: the kernel's buffers fill and each send waits on a write with two 1 MiB buffers out.
  const readers = Array.from({ length: 10 }, () => {
    const s = connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    s.on('error', () => undefined);
    s.pause();
    return s;
  });
  await until(() => sends.length === 10 && sendPool.heldBytes - heldBefore === 10 * 2 * MiB, 'ten sends holding their buffers');
  for (const s of readers) s.destroy();
  // The writes they waited on never call back: before, these sends (buffers and descriptors) stayed forever.
  await until(
    () => sendPool.heldBytes === heldBefore && fds() <= fdsBefore,
    () => `held ${sendPool.heldBytes - heldBefore} bytes, ${fds() - fdsBefore} descriptors`,
  );
  const sent = await Promise.all(sends);
  for (const n of sent) assert.ok(n < size, `a reader that left got ${n} of ${size} bytes`);
});

/** Polls `cond` every 20 ms for up to 15 s (a generous bound for a loaded machine). */
async function until(cond: () => boolean, what: string | (() => string)): Promise<void> {
  for (const end = Date.now() + 15_000; !cond(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) assert.fail(`not reached in 15 s: ${typeof what === 'string' ? what : what()}`);
  }
}
