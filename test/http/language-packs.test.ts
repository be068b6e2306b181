/**
 * Language packs from the store (docs/app-store.md, "Language packs"): the
 * example store (with the German pack built from examples/store/packs/de/)
 * served on loopback; a real server installs the pack, lists it among the
 * languages (public), serves its UI strings, takes `de` as an account's
 * language and answers errors in German; a pack whose placeholders differ
 * from English is refused and the installed one stays; an upgrade replaces
 * it; uninstalling falls back to English.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { Server } from 'node:http';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { closeAll, serveStoreFolder } from '../helpers/static-store';
import { buildExampleStore, GERMAN_PACK_DIR, languagePack } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore } from '../../server/store';
import { signIndex } from '../../server/store/format';

describe('language packs from the store', () => {
  let s: TestServer;
  let admin: string;
  let person: string;
  let site: string;
  let storeId: number;
  const servers: Server[] = [];
  let cleanup: () => void;
  const storeKey = generateKeyPairSync('ed25519').privateKey;
  const store = (method: string, path: string, body?: unknown) => s.api(method, `/api/admin/app-store${path}`, { token: admin, body });
  const refusal = (r: { status: number; body: any }) => [r.status, r.body.error, r.body.details?.kind, r.body.details?.reason];
  const languages = async () => (await s.api('GET', '/api/i18n/languages')).body.languages.map((l: any) => `${l.id}:${l.name}:${l.version ?? ''}`);
  /** Writes a pack into the store and lists it in a newly signed index. */
  const publish = async (patch: Record<string, unknown>) => {
    const { file, bytes } = languagePack(GERMAN_PACK_DIR, patch);
    writeFileSync(join(site, file), bytes);
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    return file;
  };

  before(async () => {
    const t = tempDir('filedock-langpack-');
    cleanup = t.cleanup;
    site = t.dir;
    await buildExampleStore(site, generateKeyPairSync('ed25519').privateKey, storeKey);
    const url = await serveStoreFolder(servers, site);
    s = await startTestServer();
    admin = await s.login();
    const r = await store('POST', '/stores', { url, public_key_pem: publicPem(storeKey) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    storeId = r.body.id;
    const u = await s.api('POST', '/api/admin/users', {
      token: admin,
      body: { email: 'greta@example.test', username: 'greta', password: 'greta-password-1', role: 'user' },
    });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    person = await s.login('greta@example.test', 'greta-password-1');
  });
  after(async () => {
    await s?.close();
    closeAll(servers);
    cleanup?.();
  });

  test('before the install: only the built-in languages; `de` is not an account language', async () => {
    assert.deepEqual(await languages(), ['en:English:', 'tr:Türkçe:']);
    const r = await s.api('PATCH', '/api/auth/me', { token: person, body: { language: 'de' } });
    assert.deepEqual([r.status, r.body.error, r.body.details?.field], [400, 'validation_failed', 'language']);
    const cat = (await store('GET', '/catalogue?kind=language-pack')).body;
    assert.deepEqual(
      cat.entries.map((e: any) => [e.id, e.name, e.latest?.version, e.installed_version]),
      [['de', 'Deutsch', '1.0.0', null]],
    );
  });

  test('install the German pack: listed at once, its UI strings served, installing again refused', async () => {
    let r = await store('POST', '/apps/de/install', { store: storeId });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body, { id: 'de', kind: 'language-pack', name: 'Deutsch', version: '1.0.0' });
    assert.deepEqual(await languages(), ['en:English:', 'tr:Türkçe:', 'de:Deutsch:1.0.0']);
    r = await s.api('GET', '/api/i18n/languages/de');
    assert.equal(r.status, 200);
    assert.equal(r.body.strings['common.cancel'], 'Abbrechen');
    assert.equal(r.body.strings['files.items.one'], '{n} Element');
    assert.equal((await s.api('GET', '/api/i18n/languages/fr')).status, 404);
    r = await store('POST', '/apps/de/install', { store: storeId });
    assert.deepEqual(refusal(r), [409, 'intent_installed', 'language-pack', 'already_installed']);
    const cat = (await store('GET', '/catalogue?kind=language-pack')).body;
    assert.equal(cat.entries[0].installed_version, '1.0.0');
  });

  test('an account set to `de` gets server sentences in German; `?lang=de` too, signed out, and on a public page', async () => {
    let r = await s.api('PATCH', '/api/auth/me', { token: person, body: { language: 'de' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.user.language, 'de');
    r = await s.api('PATCH', '/api/auth/me', { token: person, body: { language: 'xx' } });
    assert.deepEqual([r.status, r.body.message], [400, 'Das Feld „language“ ist nicht gültig.']);
    r = await s.api('GET', '/api/admin/app-store/stores', { token: person });
    assert.equal(r.status, 403);
    assert.equal(r.body.message, 'Dafür haben Sie keine Berechtigung.');
    r = await s.api('POST', '/api/auth/login?lang=de', { body: { email: 'greta@example.test', password: 'wrong' } });
    assert.equal(r.status, 401);
    assert.match(r.body.message, /^E-Mail oder Passwort falsch\. Noch \d+ Versuche\.$/);
    // A public page (a link that does not exist) for a visitor who asks for German.
    const page = await fetch(`${s.url}/s/no-such-link-token?lang=de`);
    const html = await page.text();
    assert.equal(page.status, 404);
    assert.match(html, /<html lang="de"/);
    assert.match(html, /Unter dieser Adresse gibt es nichts\./);
  });

  test('a pack whose placeholders differ from English is refused; the installed one stays; a good upgrade replaces it', async () => {
    // Published as the store would list it: the index signed over the bad file's size and sha256.
    const file = await publish({ version: '1.0.1' });
    const bad = JSON.parse(readFileSync(join(site, file), 'utf8'));
    bad.strings.ui['files.items'] = '{count} Elemente';
    const bytes = Buffer.from(JSON.stringify(bad));
    writeFileSync(join(site, file), bytes);
    const index = JSON.parse(readFileSync(join(site, 'index.json'), 'utf8'));
    const v = index.entries.find((e: any) => e.id === 'de').versions.find((x: any) => x.version === '1.0.1');
    Object.assign(v, { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    const indexBytes = Buffer.from(JSON.stringify(index));
    writeFileSync(join(site, 'index.json'), indexBytes);
    writeFileSync(join(site, 'index.json.sig'), signIndex(indexBytes, storeKey));
    assert.equal((await store('POST', `/stores/${storeId}/refresh`)).status, 200);

    let r = await store('POST', '/apps/de/upgrade', { store: storeId });
    assert.deepEqual(refusal(r), [502, 'store_invalid', 'language-pack', 'placeholder_mismatch']);
    assert.deepEqual([r.body.details.key, r.body.details.expected, r.body.details.got], ['ui.files.items', 'n', 'count']);
    assert.deepEqual(await languages(), ['en:English:', 'tr:Türkçe:', 'de:Deutsch:1.0.0'], 'the installed pack stays');

    // `store build` itself refuses the bad pack: it leaves the folder before the next release is listed.
    rmSync(join(site, file));
    await publish({ version: '1.0.2' });
    assert.equal((await store('POST', `/stores/${storeId}/refresh`)).status, 200);
    r = await store('POST', '/apps/de/upgrade', { store: storeId, version: '1.0.2' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(await languages(), ['en:English:', 'tr:Türkçe:', 'de:Deutsch:1.0.2']);
    r = await store('POST', '/apps/de/install', { store: storeId, version: '1.0.2' });
    assert.deepEqual(refusal(r), [409, 'intent_installed', 'language-pack', 'already_installed']);
  });

  test('uninstall: the language leaves the list and its readers fall back to English', async () => {
    let r = await store('DELETE', '/language-packs/de');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(await languages(), ['en:English:', 'tr:Türkçe:']);
    assert.equal((await s.api('GET', '/api/i18n/languages/de')).status, 404);
    r = await s.api('GET', '/api/admin/app-store/stores', { token: person });
    assert.equal(r.body.message, 'You do not have permission for this.');
    assert.equal((await store('DELETE', '/language-packs/de')).status, 404);
    // The catalogue's Uninstall (DELETE /apps/{id}) removes a pack too.
    assert.equal((await store('POST', '/apps/de/install', { store: storeId })).status, 201);
    assert.equal((await store('DELETE', '/apps/de')).status, 200);
    assert.deepEqual(await languages(), ['en:English:', 'tr:Türkçe:']);
    const audit = (await s.api('GET', '/api/admin/audit?action=app_store.uninstall', { token: admin })).body.events;
    assert.equal(audit[0]?.resource, 'language:de');
  });
});
