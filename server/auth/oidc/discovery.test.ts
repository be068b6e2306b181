import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Discovery } from './discovery';
import { OidcError } from './errors';

test('discovery: a failure is kept briefly (a burst of clicks is one request), fresh asks again; success is cached', async () => {
  let hits = 0;
  let up = false;
  const srv = createServer((req, res) => {
    hits++;
    if (!up) return void res.writeHead(503).end();
    const issuer = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        code_challenge_methods_supported: ['S256'],
      }),
    );
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const spec = { issuer: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, client_id: 'c', client_secret: '' };
    const d = new Discovery();
    const burst = await Promise.allSettled([d.get(spec), d.get(spec), d.get(spec)]);
    assert.ok(burst.every((r) => r.status === 'rejected' && r.reason instanceof OidcError && r.reason.code === 'oidc_unavailable'));
    await assert.rejects(d.get(spec));
    assert.equal(hits, 1, 'one request for the burst and the retry within 15 s');
    up = true;
    const c = await d.get(spec, { fresh: true });
    assert.equal(hits, 2);
    assert.equal(c.serverMetadata().token_endpoint, `${spec.issuer}/token`);
    await d.get(spec);
    assert.equal(hits, 2, 'kept');
  } finally {
    srv.close();
  }
});

test('discovery: plain http only on loopback; a provider without S256 is refused', async () => {
  const d = new Discovery({ timeoutS: 2 });
  await assert.rejects(
    d.get({ issuer: 'http://192.0.2.1/', client_id: 'c', client_secret: '' }),
    (e) => e instanceof OidcError && /discovery failed/.test(e.reason),
  );
  const srv = createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, code_challenge_methods_supported: ['plain'] }),
      );
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    await assert.rejects(d.get({ issuer: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, client_id: 'c', client_secret: '' }), /S256/);
  } finally {
    srv.close();
  }
});
