import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/helpers/tools';
import { DEFAULT_SETTINGS, SETTINGS_VERSION, SettingsError, SettingsStore, migrate } from './desktop-settings';

const tmp = tempDir('filedock-settings-');
after(() => tmp.cleanup());
let n = 0;
const file = (content?: unknown) => {
  const dir = join(tmp.dir, String(n++));
  mkdirSync(dir);
  const p = join(dir, 'desktop-settings.json');
  if (content !== undefined) writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
};

test('v1 migrates through every step to the current shape', () => {
  assert.deepEqual(migrate({ version: 1, port: 8080, lan: false }), {
    ...DEFAULT_SETTINGS,
    port: 8080,
    lanAccess: false,
    startAtLogin: false,
  });
});

test('v2 keeps its values and gains the v3 fields', () => {
  assert.deepEqual(migrate({ version: 2, port: 0, lanAccess: true, startAtLogin: true }), {
    port: 0,
    lanAccess: true,
    startAtLogin: true,
    dataDir: null,
    publicUrl: '',
    publicPort: 5213,
    advertise: true,
  });
});

test('an old file is upgraded on load and rewritten at the current version', () => {
  const p = file({ version: 1, port: 6000, lan: true });
  const s = new SettingsStore(p);
  assert.equal(s.get().port, 6000);
  assert.equal(JSON.parse(readFileSync(p, 'utf8')).version, SETTINGS_VERSION);
});

test('a missing file gives the defaults and writes nothing until a change', () => {
  const p = file();
  const s = new SettingsStore(p);
  assert.deepEqual(s.get(), DEFAULT_SETTINGS);
  assert.equal(existsSync(p), false);
  s.update({ startAtLogin: true });
  assert.equal(new SettingsStore(p).get().startAtLogin, true);
});

test('an invalid change is refused with the field named and nothing is written', () => {
  const p = file();
  const s = new SettingsStore(p);
  assert.throws(
    () => s.update({ port: 70000 }),
    (e: unknown) => e instanceof SettingsError && e.field === 'port',
  );
  assert.throws(
    () => s.update({ publicUrl: 'ftp://x' }),
    (e: unknown) => e instanceof SettingsError && e.field === 'publicUrl',
  );
  assert.equal(existsSync(p), false);
  assert.equal(s.update({ publicUrl: 'https://abc.example.net/' }).publicUrl, 'https://abc.example.net');
});

test('a corrupt file is set aside and the defaults are used', () => {
  const p = file('{"version": 3, "port": ');
  const s = new SettingsStore(p);
  assert.deepEqual(s.get(), DEFAULT_SETTINGS);
  assert.ok(existsSync(`${p}.bad`));
});

test('a file from a newer app is read (known fields) but never overwritten', () => {
  const doc = { version: SETTINGS_VERSION + 1, port: 7000, lanAccess: false, startAtLogin: true, dataDir: null, publicUrl: '', advertise: false, shiny: 1 };
  const p = file(doc);
  const s = new SettingsStore(p);
  assert.equal(s.readOnly, true);
  assert.equal(s.get().port, 7000);
  assert.throws(() => s.update({ port: 1 }), /newer version/);
  assert.deepEqual(JSON.parse(readFileSync(p, 'utf8')), doc);
});
