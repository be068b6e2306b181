/**
 * Upload interoperability (issue 39 items 3 and 4): finalize takes the chunk
 * answer's quoted `ETag` header as well as the body's bare etag; a refused
 * upload (a hostile path on the form upload, a chunk after abort) whose body
 * is still arriving answers its error envelope to Node's http, curl and
 * Chromium's fetch instead of a reset: within the bound (the chunk size) the
 * body is read away and the connection kept, past it the answer closes the
 * connection only after the envelope (http/refused-body.ts).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { launchBrowser } from '../e2e/ui-harness';

const MiB = 1024 * 1024;
const CHUNK = 2 * MiB;
const BOUNDARY = 'refusal-boundary';

interface Outcome {
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  body?: string;
  /** Any error the client met, before or after the answer. */
  error?: string;
  reusedSocket?: boolean;
}

/**
 * POSTs `head`, then `size` filler bytes in 64 KiB writes that wait for the socket to drain (the server
 * refuses long before the body is sent), then `tail`; resolves once the socket closed or went back to the
 * keep-alive pool, with every error seen.
 */
function send(url: string, headers: Record<string, string>, size: number, parts: { head?: Buffer; tail?: Buffer } = {}, agent?: Agent): Promise<Outcome> {
  const head = parts.head ?? Buffer.alloc(0);
  const tail = parts.tail ?? Buffer.alloc(0);
  return new Promise((resolve) => {
    const out: Outcome = {};
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(head.length + size + tail.length) } }, (res) => {
      out.status = res.statusCode;
      out.headers = res.headers;
      out.reusedSocket = req.reusedSocket;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('error', (e: NodeJS.ErrnoException) => (out.error ??= `response: ${e.code ?? e.message}`));
      res.on('end', () => (out.body = body));
    });
    req.on('error', (e: NodeJS.ErrnoException) => (out.error ??= `request: ${e.code ?? e.message}`));
    req.on('socket', (sock) => {
      sock.once('close', () => resolve(out));
      // A kept-alive socket goes back to the agent's pool instead of closing.
      sock.once('free', () => resolve(out));
    });
    const piece = Buffer.alloc(64 * 1024, 'x');
    req.write(head);
    let left = size;
    const pump = () => {
      while (left > 0) {
        if (req.destroyed || req.socket?.destroyed) return;
        const n = Math.min(left, piece.length);
        left -= n;
        if (!req.write(piece.subarray(0, n))) return void req.once('drain', pump);
      }
      req.end(tail);
    };
    pump();
  });
}

/** A multipart form whose `path` field comes first: the head before the file's bytes and the tail after them. */
const form = (path: string) => ({
  head: Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="path"\r\n\r\n${path}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  ),
  tail: Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
});

function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Asynchronous: the server under test runs in this process.
    execFile('timeout', ['60', 'curl', '-sS', ...args], { encoding: 'utf8', maxBuffer: 1 << 20 }, (e, stdout, stderr) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('upload interoperability: quoted etags, refusals answered, not reset', { timeout: 240_000 }, () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;
  const auth = () => ({ authorization: `Bearer ${admin}` });

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-refusals-'));
    s = await startTestServer({ SERVICE_UPLOAD_MAX_CHUNK_BYTES: String(CHUNK) });
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Up', driver: 'local', config: { path: root } } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  /** An upload session opened and aborted at once: its chunks are refused (404). */
  const abortedSession = async () => {
    const i = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: '/Up/gone.bin', size: 10 * MiB } });
    assert.equal(i.status, 200, JSON.stringify(i.body));
    assert.equal((await s.api('POST', '/api/files/upload/abort', { token: admin, body: { upload_id: i.body.upload_id } })).status, 200);
    return `${s.url}/api/files/upload/chunk?upload_id=${i.body.upload_id}&part=1`;
  };
  const envelope = (body: string | undefined, error: string) => {
    const parsed = JSON.parse(body ?? 'null');
    assert.equal(parsed?.error, error, body);
    assert.ok(parsed.message, 'the envelope has its message');
  };

  test('finalize takes the ETag header as it came (quoted) and the body etag (bare)', async () => {
    const data = randomBytes(CHUNK + 1000);
    const i = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: '/Up/etags.bin', size: data.length } });
    const id = i.body.upload_id;
    const parts = [];
    for (const n of [1, 2]) {
      const r = await fetch(`${s.url}/api/files/upload/chunk?upload_id=${id}&part=${n}`, {
        method: 'POST',
        headers: auth(),
        body: new Uint8Array(data.subarray((n - 1) * CHUNK, n * CHUNK)),
      });
      const body = await r.json();
      assert.equal(r.status, 200, JSON.stringify(body));
      const header = r.headers.get('etag')!;
      assert.equal(header, `"${body.etag}"`, 'the header is the quoted body etag');
      parts.push({ header, bare: body.etag as string });
    }
    // A standard client names the header's value; one part each way.
    const done = await s.api('POST', '/api/files/upload/finalize', {
      token: admin,
      body: {
        upload_id: id,
        etags: [
          { part: 1, etag: parts[0].header },
          { part: 2, etag: parts[1].bare },
        ],
      },
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(readFileSync(join(root, 'etags.bin')).equals(data));

    const j = (await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: '/Up/etags2.bin', size: 10 } })).body.upload_id;
    const p = await fetch(`${s.url}/api/files/upload/chunk?upload_id=${j}&part=1`, { method: 'POST', headers: auth(), body: '0123456789' });
    const quoted = p.headers.get('etag')!;
    await p.arrayBuffer();
    const wrong = await s.api('POST', '/api/files/upload/finalize', { token: admin, body: { upload_id: j, etags: [{ part: 1, etag: `"${quoted}"` }] } });
    assert.equal(wrong.status, 409, 'only one pair of quotes is taken off');
    assert.equal((await s.api('POST', '/api/files/upload/finalize', { token: admin, body: { upload_id: j, etags: [{ part: 1, etag: quoted }] } })).status, 200);
  });

  test("Node's http: within the bound the body is read away and the connection kept; past it the envelope comes before the close, never a reset", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const [what, url, parts, error] of [
        ['hostile path', `${s.url}/api/files/upload`, form('/Up/../../etc'), 'bad_path'],
        ['chunk after abort', await abortedSession(), {}, 'not_found'],
      ] as const) {
        const headers = { ...auth(), 'content-type': parts.head ? `multipart/form-data; boundary=${BOUNDARY}` : 'application/octet-stream' };
        const small = await send(url, headers, CHUNK - 4096, parts, agent);
        assert.equal(small.error, undefined, `${what}, within the bound: ${small.error}`);
        envelope(small.body, error);
        assert.notEqual(small.headers?.connection, 'close', `${what}: the connection is kept within the bound`);
        // The kept connection carries the next request.
        const next = await send(url, headers, 10, parts, agent);
        assert.equal(next.reusedSocket, true, `${what}: the next request reuses the connection`);
        envelope(next.body, error);
        for (const size of [8 * MiB, 64 * MiB]) {
          const big = await send(url, headers, size, parts);
          assert.equal(big.error, undefined, `${what}, ${size} bytes: no reset, no EPIPE (${big.error})`);
          envelope(big.body, error);
          assert.equal(big.headers?.connection, 'close', `${what}: past the bound the connection closes after the envelope`);
        }
      }
    } finally {
      agent.destroy();
    }
    assert.equal((await s.api('GET', '/api/capabilities')).status, 200, 'still serving');
  });

  test('a chunk longer than its part is refused before it streams, and answered the same way', async () => {
    const i = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: '/Up/long.bin', size: 2 * CHUNK } });
    const url = `${s.url}/api/files/upload/chunk?upload_id=${i.body.upload_id}&part=1`;
    for (const size of [CHUNK + 1, 24 * MiB]) {
      const r = await send(url, { ...auth(), 'content-type': 'application/octet-stream' }, size);
      assert.equal(r.error, undefined, `${size} bytes: no reset, no EPIPE (${r.error})`);
      envelope(r.body, 'bad_body');
    }
    const st = await s.api('GET', `/api/files/upload/status?upload_id=${i.body.upload_id}`, { token: admin });
    assert.deepEqual(st.body.parts, [], 'nothing of it is held');
  });

  test('curl --data-binary and -F: prints the envelope and exits 0 (22 with --fail), never 55/56', async () => {
    const { dir, cleanup: done } = tempDir('filedock-curl-');
    try {
      for (const size of [MiB, 24 * MiB]) {
        const file = join(dir, `body-${size}`);
        writeFileSync(file, Buffer.alloc(size, 'x'));
        const h = ['-H', `authorization: Bearer ${admin}`];
        const formed = await curl([...h, '-F', 'path=/Up/../../etc', '-F', `file=@${file}`, `${s.url}/api/files/upload`]);
        assert.equal(formed.code, 0, `form ${size}: ${formed.stderr}`);
        envelope(formed.stdout, 'bad_path');
        const chunk = await curl([...h, '-H', 'content-type: application/octet-stream', '--data-binary', `@${file}`, await abortedSession()]);
        assert.equal(chunk.code, 0, `chunk ${size}: ${chunk.stderr}`);
        envelope(chunk.stdout, 'not_found');
        const failing = await curl([
          ...h,
          '--fail-with-body',
          '-H',
          'content-type: application/octet-stream',
          '--data-binary',
          `@${file}`,
          await abortedSession(),
        ]);
        assert.equal(failing.code, 22, `chunk ${size} with --fail-with-body: ${failing.stderr}`);
        envelope(failing.stdout, 'not_found');
      }
    } finally {
      done();
    }
  });

  test("Chromium's fetch reads the envelope of a refused 24 MiB upload", async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      // Same origin as the API: any page of the server will do.
      await page.goto(`${s.url}/api/capabilities`);
      const urls = { form: `${s.url}/api/files/upload`, chunk: await abortedSession() };
      const got = await page.evaluate(
        async ({ urls, token, size }) => {
          const out: Record<string, unknown> = {};
          const bytes = new Uint8Array(size);
          const fd = new FormData();
          fd.append('path', '/Up/../../etc');
          fd.append('file', new Blob([bytes]), 'big.bin');
          const headers = { authorization: `Bearer ${token}` };
          for (const [name, init] of [
            ['form', { body: fd }],
            ['chunk', { body: new Blob([bytes]) }],
          ] as const) {
            try {
              const r = await fetch(urls[name], { method: 'POST', headers, ...init });
              out[name] = { status: r.status, body: await r.json() };
            } catch (e) {
              out[name] = { failed: String(e) };
            }
          }
          return out;
        },
        { urls, token: admin, size: 24 * MiB },
      );
      assert.deepEqual((got.form as any).body?.error, 'bad_path', JSON.stringify(got.form));
      assert.equal((got.form as any).status, 400);
      assert.deepEqual((got.chunk as any).body?.error, 'not_found', JSON.stringify(got.chunk));
      assert.equal((got.chunk as any).status, 404);
    } finally {
      await browser.close();
    }
  });
});
