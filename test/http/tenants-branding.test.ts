/**
 * Multi-tenant mode, step 4 (docs/tenants.md, "Step 4: branding and the Tenants screen"): a tenant's name,
 * colour and logo on its public pages (link pages and their error pages), escaped; the logo's upload (the
 * operator's and the tenant admin's own), its refusals (wrong type, SVG, too large, another tenant's id), its
 * public route per host with a strong ETag; tenant 1's pages stay plain until its branding is set.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { onHost } from '../helpers/tenants';
import { tempDir } from '../helpers/tools';

const ALPHA = 'alpha.example.test';
const DEFAULT = 'localhost';
/** A real 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
const HTML = { accept: 'text/html' };

describe('tenants: branding of the public pages', () => {
  let s: TestServer;
  let operator: string;
  let alphaAdmin: string;
  let alphaId: number;
  let token: string;
  const cleanups: Array<() => void> = [];

  before(async () => {
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    operator = await s.login();
    const made = await s.api('POST', '/api/platform/tenants', {
      token: operator,
      body: {
        slug: 'alpha',
        name: 'Alpha',
        hostnames: [ALPHA],
        branding: { name: 'Alpha & <Co>', colour: '#12AB34' },
        admin: { email: 'boss@alpha.test', password: 'alpha-password-1' },
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    alphaId = made.body.tenant.id;
    const alpha = onHost(s, ALPHA);
    alphaAdmin = (await alpha('POST', '/api/auth/login', { body: { email: 'boss@alpha.test', password: 'alpha-password-1' } })).body.token;
    const root = tempDir('filedock-brand-');
    cleanups.push(root.cleanup);
    writeFileSync(join(root.dir, 'plan.txt'), 'alpha plan');
    const st = await alpha('POST', '/api/admin/storages', {
      token: alphaAdmin,
      body: { name: 'Docs', driver: 'local', rbac_enabled: false, config: { path: root.dir } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    const share = await alpha('POST', '/api/files/share', { token: alphaAdmin, body: { path: '/Docs/plan.txt' } });
    assert.equal(share.status, 200, JSON.stringify(share.body));
    token = share.body.token;
  });
  after(async () => {
    await s.close();
    for (const c of cleanups) c();
  });

  test('the link page and its error page carry the tenant’s name (escaped) and colour; tenant 1’s stay plain', async () => {
    const alpha = onHost(s, ALPHA);
    const page = await alpha('GET', `/s/${token}`, { headers: HTML });
    assert.equal(page.status, 200, page.bytes.toString());
    const html = page.bytes.toString();
    assert.match(html, /<header class="brand"><span>Alpha &#38; &#60;Co&#62;<\/span><\/header>/);
    assert.match(html, /:root\{--ac:#12ab34\}/, 'the colour, lower-cased, as the accent');
    assert.ok(!html.includes('<Co>'), 'nothing unescaped');
    const missing = await alpha('GET', '/s/no-such-token', { headers: HTML });
    assert.equal(missing.status, 404);
    assert.match(missing.bytes.toString(), /Alpha &#38; &#60;Co&#62;/, 'the error page is branded too');

    // The same token on the installation's own host is not found, and that page has no branding.
    const elsewhere = await onHost(s, DEFAULT)('GET', `/s/${token}`, { headers: HTML });
    assert.equal(elsewhere.status, 404);
    assert.ok(!elsewhere.bytes.toString().includes('class="brand"'), 'tenant 1 has none set');
  });

  test('the operator uploads a logo: the page shows it, the host serves it with a strong ETag, other hosts do not', async () => {
    const up = await s.api('PUT', `/api/platform/tenants/${alphaId}/logo`, {
      token: operator,
      raw: new Uint8Array(PNG),
      headers: { 'content-type': 'image/png' },
    });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const etag = up.body.branding.logo as string;
    assert.match(etag, /^[\w-]{22}$/);
    assert.deepEqual(up.body.branding, { name: 'Alpha & <Co>', colour: '#12ab34', logo: etag });
    const alpha = onHost(s, ALPHA);
    const html = (await alpha('GET', `/s/${token}`, { headers: HTML })).bytes.toString();
    assert.ok(html.includes(`<img src="/api/public/branding/logo?v=${etag}" alt="">`), html);
    // Through the tenant's path prefix the logo's address keeps the prefix (the page's own links do).
    const prefixed = (await onHost(s, DEFAULT)('GET', `/t/alpha/s/${token}`, { headers: HTML })).bytes.toString();
    assert.ok(prefixed.includes(`<img src="/t/alpha/api/public/branding/logo?v=${etag}" alt="">`), prefixed);
    assert.ok((await onHost(s, DEFAULT)('GET', `/t/alpha/api/public/branding/logo?v=${etag}`)).bytes.equals(PNG));

    const logo = await alpha('GET', `/api/public/branding/logo?v=${etag}`);
    assert.equal(logo.status, 200);
    assert.ok(logo.bytes.equals(PNG), 'the same bytes');
    assert.equal(logo.headers['content-type'], 'image/png');
    assert.equal(logo.headers.etag, `"${etag}"`);
    assert.equal(logo.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(logo.headers['x-content-type-options'], 'nosniff');
    const again = await alpha('GET', '/api/public/branding/logo', { headers: { 'if-none-match': `"${etag}"` } });
    assert.equal(again.status, 304);
    assert.equal(again.headers['cache-control'], 'public, max-age=300', 'an unversioned address is revalidated');
    assert.equal((await onHost(s, DEFAULT)('GET', '/api/public/branding/logo')).status, 404, 'tenant 1 has no logo');

    // A PATCH of the name and colour keeps the logo (it has its own upload).
    const patched = await s.api('PATCH', `/api/platform/tenants/${alphaId}`, { token: operator, body: { branding: { name: 'Alpha' } } });
    assert.deepEqual(patched.body.tenant.branding, { name: 'Alpha', logo: etag });
  });

  test('bad input: colour, a logo field, SVG, text, too large, another tenant’s id, a tenant admin on the platform route', async () => {
    for (const colour of ['red', '#12ab3', '#12ab34;}body{', 'url(x)']) {
      const r = await s.api('PATCH', `/api/platform/tenants/${alphaId}`, { token: operator, body: { branding: { colour } } });
      assert.equal(r.status, 400, colour);
      assert.equal(r.body.error, 'validation_failed');
    }
    const field = await s.api('PATCH', `/api/platform/tenants/${alphaId}`, { token: operator, body: { branding: { logo: 'https://evil.test/x.png' } } });
    assert.equal(field.status, 400, 'the logo is no JSON field');
    const put = (raw: Buffer, id = alphaId, type = 'application/octet-stream') =>
      s.api('PUT', `/api/platform/tenants/${id}/logo`, { token: operator, raw: new Uint8Array(raw), headers: { 'content-type': type } });
    const svg = await put(SVG, alphaId, 'image/svg+xml');
    assert.equal(svg.status, 415);
    assert.equal(svg.body.error, 'unsupported_media_type');
    assert.equal((await put(Buffer.from('just text'), alphaId, 'image/png')).status, 415, 'the bytes decide, not the header');
    const big = await put(Buffer.concat([PNG, Buffer.alloc(256 * 1024)]));
    assert.equal(big.status, 413);
    assert.equal(big.body.error, 'payload_too_large');
    assert.equal((await put(PNG, 9999)).status, 404, 'no such tenant');
    assert.equal((await s.api('DELETE', '/api/platform/tenants/9999/logo', { token: operator })).status, 404);
    const asAdmin = await onHost(s, ALPHA)('PUT', `/api/platform/tenants/${alphaId}/logo`, {
      token: alphaAdmin,
      raw: PNG,
      headers: { 'content-type': 'image/png' },
    });
    assert.equal(asAdmin.status, 403);
    assert.equal(asAdmin.body.error, 'supertenant_only');
    // The logo the refusals met is still the one before them.
    assert.ok((await onHost(s, ALPHA)('GET', '/api/public/branding/logo')).bytes.equals(PNG));
  });

  test('a tenant admin sets its own branding, within its tenant only', async () => {
    const alpha = onHost(s, ALPHA);
    const before = await alpha('GET', '/api/admin/branding', { token: alphaAdmin });
    assert.equal(before.status, 200, JSON.stringify(before.body));
    const logo = before.body.branding.logo;
    const set = await alpha('PUT', '/api/admin/branding', { token: alphaAdmin, body: { name: 'Alpha office', colour: '#000000' } });
    assert.deepEqual(set.body.branding, { name: 'Alpha office', colour: '#000000', logo });
    assert.equal((await alpha('PUT', '/api/admin/branding', { token: alphaAdmin, body: { colour: 'blue' } })).status, 400);
    assert.deepEqual((await s.api('GET', '/api/admin/branding', { token: operator })).body.branding, {}, 'tenant 1’s is its own');
    const gone = await alpha('DELETE', '/api/admin/branding/logo', { token: alphaAdmin });
    assert.deepEqual(gone.body.branding, { name: 'Alpha office', colour: '#000000' });
    assert.equal((await alpha('GET', '/api/public/branding/logo')).status, 404);
    const html = (await alpha('GET', `/s/${token}`, { headers: HTML })).bytes.toString();
    assert.match(html, /<header class="brand"><span>Alpha office<\/span><\/header>/);
    const own = await alpha('PUT', '/api/admin/branding/logo', { token: alphaAdmin, raw: PNG, headers: { 'content-type': 'image/png' } });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal((await alpha('GET', '/api/public/branding/logo')).status, 200);
  });

  test('tenant 1 set by its admin: its pages carry it; a deleted tenant’s logo goes with it', async () => {
    await s.api('PUT', '/api/admin/branding', { token: operator, body: { name: 'The installation' } });
    const html = (await onHost(s, DEFAULT)('GET', '/s/nothing', { headers: HTML })).bytes.toString();
    assert.match(html, /<header class="brand"><span>The installation<\/span><\/header>/);
    assert.doesNotMatch(html, /:root\{--ac:#[0-9a-f]{6}\}/, 'no colour set, none written');
    assert.equal((await s.api('PATCH', `/api/platform/tenants/${alphaId}`, { token: operator, body: { status: 'suspended' } })).status, 200);
    assert.equal((await onHost(s, ALPHA)('GET', '/api/public/branding/logo')).status, 404, 'a suspended tenant’s logo is not served');
    assert.equal((await s.api('DELETE', `/api/platform/tenants/${alphaId}`, { token: operator })).status, 200);
    const rows = await s.server.db.async.sql('SELECT tenant_id FROM tenant_logos WHERE tenant_id = ?', [alphaId]);
    assert.equal(rows.length, 0);
  });
});
