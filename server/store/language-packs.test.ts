/**
 * Installed language packs survive a restart: the repository keeps the
 * verified pack (one row, replaced whole by an upgrade), and `load()` puts it
 * back in memory; a stored pack that no longer reads is skipped, not fatal.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '../events';
import { isLang, languagePacks, t as sentence } from '../lib/i18n';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { GERMAN_PACK_DIR, languagePack } from '../../scripts/build-example-store';
import { LanguagePacksRepo } from './language-packs.repo';
import { LanguagePackStore } from './language-packs';

let db: TestDb;
let repo: LanguagePacksRepo;
before(async () => {
  db = await openTestDb();
  repo = new LanguagePacksRepo(db.db);
});
after(() => db?.close());

const row = (bytes: Buffer, version: string) => ({
  id: 'de',
  name: 'Deutsch',
  version,
  store_id: null,
  sha256: '0'.repeat(64),
  pack: bytes.toString('utf8'),
  installed_at: new Date().toISOString(),
});

test('a stored pack is loaded at start; an upgrade replaces the row; a broken row is skipped', async () => {
  await repo.put(row(languagePack(GERMAN_PACK_DIR).bytes, '1.0.0'));
  await repo.put(row(languagePack(GERMAN_PACK_DIR, { version: '1.0.3' }).bytes, '1.0.3'));
  assert.deepEqual(
    (await repo.list()).map((r) => [r.id, r.version]),
    [['de', '1.0.3']],
  );
  languagePacks.delete('de');
  assert.equal(isLang('de'), false);
  await new LanguagePackStore({ repo, bus: new EventBus(db.db) }).load();
  assert.equal(isLang('de'), true);
  assert.equal(languagePacks.get('de')!.version, '1.0.3');
  assert.equal(sentence('de', 'not_found'), 'Nicht gefunden.');
  // A key the pack lacks reads in English.
  delete (languagePacks.get('de')!.strings.errors as Record<string, unknown>).not_found;
  assert.equal(sentence('de', 'not_found'), 'Not found.');

  await repo.put({ ...row(Buffer.from('{"not": "a pack"}'), '9.9.9') });
  languagePacks.delete('de');
  await new LanguagePackStore({ repo, bus: new EventBus(db.db) }).load();
  assert.equal(isLang('de'), false);
  assert.equal(await repo.remove('de'), true);
  assert.equal(await repo.remove('de'), false);
});
