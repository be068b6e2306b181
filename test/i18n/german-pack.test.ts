/**
 * The German language pack of the example store (examples/store/packs/de/) is
 * complete: every English key of the web UI, the error sentences and the
 * public pages and e-mails is translated, with the same `{placeholders}`, and
 * its UI source mirrors the English catalogue files one by one. The same
 * check the server runs at install (comparePack) plus completeness, which an
 * install does not demand (a missing key shows in English).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { comparePack, missingKeys, readPack } from '../../server/store/language-pack';
import { GERMAN_PACK_DIR, languagePack, packUiFiles } from '../../scripts/build-example-store';
import { compiledTwin } from '../../server/lib/worker';

const EN_DIR = new URL('../../renderer/src/i18n/en/', import.meta.url).pathname;
const pack = readPack(languagePack(GERMAN_PACK_DIR).bytes);

test('the German pack reads as a language pack (format, Intl plural rules, placeholders)', () => {
  assert.equal(pack.id, 'de');
  assert.equal(pack.name, 'Deutsch');
  assert.ok(Object.keys(pack.strings.ui).length > 1000, 'the UI strings are all there');
});

test('every English key is in the German pack, with the same placeholders, and nothing else', () => {
  assert.deepEqual(missingKeys(pack.strings), []);
  assert.deepEqual(comparePack(pack.strings), []);
});

test('the pack’s UI source mirrors the English catalogue files one by one, key for key', async () => {
  const english = readdirSync(EN_DIR)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => basename(f, '.ts'))
    .sort();
  assert.deepEqual(packUiFiles(GERMAN_PACK_DIR), english, 'one ui/<name>.json per renderer/src/i18n/en/<name>.ts');
  for (const name of english) {
    const source = join(EN_DIR, `${name}.ts`);
    const mod: Record<string, Record<string, string>> = await import(compiledTwin(source, import.meta.url, import.meta.filename) ?? source);
    const en = Object.values(mod)[0];
    const de = (await import(join(GERMAN_PACK_DIR, 'ui', `${name}.json`), { with: { type: 'json' } })).default;
    assert.deepEqual(Object.keys(de).sort(), Object.keys(en).sort(), `ui/${name}.json has the keys of en/${name}.ts`);
  }
});

test('a translated string differs from English where a German word is expected', () => {
  assert.equal(pack.strings.ui['common.cancel'], 'Abbrechen');
  assert.equal(pack.strings.ui['files.items'], '{n} Elemente');
  assert.equal(pack.strings.ui['files.items.one'], '{n} Element');
  assert.equal(pack.strings.errors.not_found, 'Nicht gefunden.');
});
