import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { isAppError } from '../errors';
import { fetchStoreFile } from './fetch';

let server: Server;
let base: string;
const held: ServerResponse[] = [];

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') return void held.push(res);
    if (req.url === '/etag') {
      res.setHeader('etag', '"v1"');
      res.statusCode = req.headers['if-none-match'] === '"v1"' ? 304 : 200;
      return void res.end(res.statusCode === 200 ? 'body' : undefined);
    }
    if (req.url === '/missing') return void ((res.statusCode = 404), res.end());
    res.end(Buffer.alloc(2000, 0x61));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    assert.ok(isAppError(e), String(e));
    return [e.code, e.params.reason];
  }
  assert.fail('not refused');
};

test('a body within the cap is read; over it, too_large; a 404 and a closed port are store_unreachable', async () => {
  const r = await fetchStoreFile(`${base}/x`, { timeoutMs: 2000, maxBytes: 2000 });
  assert.equal(!r.not_modified && r.bytes.length, 2000);
  assert.deepEqual(await refusal(fetchStoreFile(`${base}/x`, { timeoutMs: 2000, maxBytes: 1999 })), ['store_invalid', 'too_large']);
  assert.deepEqual(await refusal(fetchStoreFile(`${base}/missing`, { timeoutMs: 2000, maxBytes: 10 })), ['store_unreachable', 'http_status']);
  assert.deepEqual(await refusal(fetchStoreFile('http://127.0.0.1:1/', { timeoutMs: 2000, maxBytes: 10 })), ['store_unreachable', 'unreachable']);
});

test('a conditional GET answers not_modified on 304; a hanging server is cut at the timeout', async () => {
  const first = await fetchStoreFile(`${base}/etag`, { timeoutMs: 2000, maxBytes: 100 });
  assert.equal(!first.not_modified && first.etag, '"v1"');
  assert.deepEqual(await fetchStoreFile(`${base}/etag`, { timeoutMs: 2000, maxBytes: 100, etag: '"v1"' }), { not_modified: true });
  const t0 = Date.now();
  assert.deepEqual(await refusal(fetchStoreFile(`${base}/hang`, { timeoutMs: 300, maxBytes: 100 })), ['store_unreachable', 'timeout']);
  assert.ok(Date.now() - t0 < 2000);
  assert.equal(held.length, 1);
});
