import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { appFetch, HTTP_OUT } from './http-out';
import { AppError } from '../../errors';

const srv = createServer((req, res) => {
  if (req.url === '/big') return void res.end(Buffer.alloc(HTTP_OUT.max_response_bytes + 1, 0x61));
  if (req.url === '/redirect') return void res.writeHead(302, { location: 'http://169.254.169.254/latest' }).end();
  res.end(`${req.method} ${req.headers['x-app'] ?? ''} ${req.headers.cookie ?? 'no-cookie'}`);
});
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
const host = `127.0.0.1:${(srv.address() as { port: number }).port}`;
after(() => srv.close());

const refused = async (p: Promise<unknown>, reason: RegExp) => {
  const e = await p.then(
    () => null,
    (x) => x,
  );
  assert.ok(e instanceof AppError && e.code === 'app_host_refused', String(e));
  assert.match(String(e.details?.reason), reason);
};

test("only approved hosts; redirects are handed back, not followed; the response is capped; hop headers are not the app's to set", async () => {
  const ok = await appFetch('p', [host], {
    url: `http://${host}/x`,
    method: 'post',
    headers: { 'x-app': 'yes', cookie: 'stolen=1', 'bad header': 'x' },
    body: 'b',
  });
  assert.deepEqual([ok.status, ok.body], [200, 'POST yes no-cookie']);
  await refused(appFetch('p', [], { url: `http://${host}/x` }), /not an approved host/);
  await refused(appFetch('p', ['127.0.0.1'], { url: `http://${host}/x` }), /not an approved host/); // the port counts
  await refused(appFetch('p', [host], { url: 'file:///etc/passwd' }), /only http/);
  await refused(appFetch('p', [host], { url: `http://u:p@${host}/` }), /credentials/);
  await refused(appFetch('p', [host], { url: 'not a url' }), /not a URL/);
  await refused(appFetch('p', [host], { url: `http://${host}/x`, method: 'CONNECT' }), /method/);
  const r = await appFetch('p', [host], { url: `http://${host}/redirect` });
  assert.deepEqual([r.status, r.headers.location], [302, 'http://169.254.169.254/latest']);
  await refused(appFetch('p', [host], { url: `http://${host}/big` }), /larger than/);
});
