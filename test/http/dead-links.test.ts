/**
 * Dead links (issue 39, items 7 and 16): a used-up file request answers the
 * styled dead-link page like a share link does, to any client that does not
 * ask for JSON; revoked, expired and used-up links each say which, and
 * nothing more. A file request's uses are its submissions. Real server,
 * real local storage.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { sqlRows } from '../helpers/sql';

let s: TestServer;
let admin: string;
let root: { dir: string; cleanup: () => void };
let folders = 0;

const share = async (body: Record<string, unknown>) => {
  const r = await s.api('POST', '/api/files/share', { token: admin, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { id: number; token: string };
};
const drop = async (body: Record<string, unknown> = {}) => {
  const folder = `in${++folders}`;
  mkdirSync(join(root.dir, folder));
  return share({ path: `/Files/${folder}`, kind: 'drop', ...body });
};
/** One visit of the drop form (as a browser without JavaScript, or curl -F, posts it). */
const send = async (token: string, names: string[]) => {
  const form = new FormData();
  for (const n of names) form.append('files', new Blob([n]), n);
  const r = await fetch(`${s.url}/d/${token}`, { method: 'POST', body: form, headers: { accept: 'text/html' } });
  await r.text();
  return r.status;
};
const get = async (path: string, headers: Record<string, string> = {}) => {
  const r = await fetch(s.url + path, { headers });
  return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text(), csp: r.headers.get('content-security-policy') ?? '' };
};
const reasonOf = (html: string) => /data-reason="([a-z_]+)"/.exec(html)?.[1];

before(async () => {
  root = tempDir('filedock-deadlinks-');
  writeFileSync(join(root.dir, 'secret-plan.txt'), 'plan');
  s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: root.dir, SERVICE_DEFAULT_STORAGE_NAME: 'Files' });
  admin = await s.login();
});
after(async () => {
  await s.close();
  root.cleanup();
});

describe('dead links', () => {
  test('a used-up file request answers the styled dead-link page (not JSON) to clients that do not ask for JSON', async () => {
    const d = await drop({ max_uploads: 1 });
    assert.equal(await send(d.token, ['one.txt']), 200);
    // No Accept header (curl without -H), curl's */*, and a browser: the page, as /s/{token} answers.
    for (const headers of [{}, { accept: '*/*' }, { accept: 'text/html,application/xhtml+xml' }] as Array<Record<string, string>>) {
      const r = await get(`/d/${d.token}`, headers);
      assert.equal(r.status, 404, JSON.stringify(headers));
      assert.match(r.type, /^text\/html/, JSON.stringify(headers));
      assert.match(r.csp, /default-src 'none'/);
      assert.equal(reasonOf(r.text), 'used_up_drop');
      assert.match(r.text, /File request full/);
    }
    // A client that asks for JSON still gets the envelope.
    const json = await get(`/d/${d.token}`, { accept: 'application/json' });
    assert.equal(json.status, 404);
    assert.deepEqual([JSON.parse(json.text).error, JSON.parse(json.text).params?.reason], ['not_found', 'capped']);
    // An unknown file request gets the page too, with the not-found sentence.
    const unknown = await get(`/d/${'x'.repeat(d.token.length)}`);
    assert.deepEqual([unknown.status, reasonOf(unknown.text)], [404, 'not_found']);
  });

  test('revoked, expired and used up each say which (English and Turkish), and nothing about the file', async () => {
    const revoked = await share({ path: '/Files/secret-plan.txt' });
    assert.equal((await s.api('DELETE', `/api/files/share/${revoked.id}`, { token: admin })).status, 200);
    const expired = await share({ path: '/Files/secret-plan.txt' });
    await sqlRows(s.server.db, 'UPDATE shares SET expires_at = ? WHERE id = ?', new Date(Date.now() - 1000).toISOString(), expired.id);
    const used = await share({ path: '/Files/secret-plan.txt', max_downloads: 1 });
    const dl = await get(`/s/${used.token}`, { 'user-agent': 'curl/8.5.0', accept: '*/*' });
    assert.deepEqual([dl.status, dl.text], [200, 'plan']);

    const cases = [
      [revoked.token, 'revoked', /Link revoked/, /Bağlantı iptal edildi/],
      [expired.token, 'expired', /Link expired/, /Bağlantının süresi doldu/],
      [used.token, 'used_up', /Link used up/, /Bağlantı tükendi/],
      ['y'.repeat(32), 'not_found', /Link not available/, /Bağlantı kullanılamıyor/],
    ] as const;
    for (const [token, reason, en, tr] of cases) {
      for (const headers of [{ accept: 'text/html' }, {}] as Array<Record<string, string>>) {
        const page = await get(`/s/${token}`, headers);
        assert.equal(page.status, 404, reason);
        assert.equal(reasonOf(page.text), reason);
        assert.match(page.text, en);
        assert.doesNotMatch(page.text, /secret-plan|Files|\b1 download/, 'the page tells the reason and nothing more');
      }
      const trPage = await get(`/s/${token}?lang=tr`, { accept: 'text/html' });
      assert.match(trPage.text, tr);
      assert.match(trPage.text, /<html lang="tr">/);
    }
    // The sentences differ from one another.
    const sentences = await Promise.all(cases.map(async ([token]) => /<p data-reason="[a-z_]+">([^<]+)<\/p>/.exec((await get(`/s/${token}`)).text)![1]));
    assert.equal(new Set(sentences).size, cases.length, sentences.join(' | '));
    // The API keeps the spec's codes: an owner-revoked link is `expired` (410), a used-up one `not_found` (404).
    const api = await s.api('GET', `/api/files/share/${revoked.token}`);
    assert.deepEqual([api.status, api.body.error, api.body.params?.reason], [410, 'expired', 'revoked']);
    assert.equal((await s.api('GET', `/api/files/share/${expired.token}`)).body.params, undefined);
    assert.deepEqual((await s.api('GET', `/api/files/share/${used.token}`)).body.params, { reason: 'capped' });
  });

  test('a file request counts its uses as submissions: three files in two visits are two uses', async () => {
    const d = await drop({ max_uploads: 10 });
    assert.equal(await send(d.token, ['a.txt', 'b.txt']), 200);
    assert.equal(await send(d.token, ['c.txt']), 200);
    // A visit that sent nothing (a submission opened and left) is no use.
    assert.equal((await s.api('POST', `/api/public/drop/${d.token}/submissions`, { body: {} })).status, 200);
    const list = await s.api('GET', '/api/files/share', { token: admin });
    const row = list.body.shares.find((x: { id: number }) => x.id === d.id);
    assert.deepEqual([row.submissions, row.uploads, row.max_uploads], [2, 3, 10]);
  });
});
