import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { AppError } from '../../errors';
import { ZipWriter } from '../../lib/zip-writer';
import { peekAppManifest, readAppPackage } from './package';
import { buildAppPackage, publisherKey, sampleManifest } from '../../../test/helpers/app-package';
import { AppSandbox } from '../sandbox/sandbox';

const key = publisherKey('acme');
const trusted = [key.trusted];
const VERSION = '0.1.0';

/** The package is refused with validation_failed naming `field`, and a reason matching `reason`. */
async function refused(bytes: Buffer, field: string | RegExp, reason: RegExp, version = VERSION) {
  const e = await readAppPackage(bytes, { trusted, version }).then(
    () => null,
    (x) => x,
  );
  assert.ok(e instanceof AppError, `expected a refusal, got ${e}`);
  assert.equal(e.code, 'validation_failed', e.message);
  const d = e.details as { field: string; reason: string };
  if (typeof field === 'string') assert.equal(d.field, field, JSON.stringify(d));
  else assert.match(d.field, field);
  assert.match(d.reason, reason);
}

test('a good package verifies, and its code runs in the sandbox', async () => {
  const pkg = await readAppPackage(
    await buildAppPackage({
      key,
      extra: { 'icons/app.svg': '<svg/>', 'i18n/tr.json': JSON.stringify({ 'action.greet': 'Merhaba de' }) },
      manifest: sampleManifest({ icons: { '32': 'icons/app.svg' } }),
    }),
    { trusted, version: VERSION },
  );
  assert.equal(pkg.manifest.id, 'hello');
  assert.deepEqual(pkg.manifest.permissions, ['files.read']);
  assert.equal(pkg.languages.tr['action.greet'], 'Merhaba de');
  assert.equal(pkg.icons['icons/app.svg'].toString(), '<svg/>');
  assert.match(pkg.digest, /^[0-9a-f]{64}$/);
  const sb = await AppSandbox.start({ code: pkg.code });
  try {
    assert.equal(await sb.call('greet', { name: 'ada' }, { timeoutMs: pkg.manifest.call_timeout_ms }), 'hello ada');
  } finally {
    await sb.close();
  }
});

test('tampered code and a wrong key are refused by the signature', async () => {
  await refused(await buildAppPackage({ key, afterSigning: { 'code.js': `app.greet = () => 'pwned';` } }), 'signature.json', /does not verify/);
  await refused(await buildAppPackage({ key, afterSigning: { 'i18n/de.json': '{}' } }), 'signature.json', /does not verify/);
  await refused(await buildAppPackage({ key, signWith: publisherKey('acme').privateKey }), 'signature.json', /does not verify/);
  await refused(await buildAppPackage({ key: publisherKey('mallory') }), 'signature.json.publisher', /no trusted key for publisher mallory/);
  // A trusted publisher may not ship an app under another publisher's name.
  await refused(await buildAppPackage({ key, manifest: sampleManifest({ publisher: 'other' }) }), 'publisher', /acme signed it/);
});

test('unknown manifest fields are refused with their path', async () => {
  await refused(await buildAppPackage({ key, manifest: sampleManifest({ colour: 'red' }) }), 'colour', /unknown field/);
  const actions = [{ id: 'greet', label: 'action.greet', applies: { kind: 'file', colour: 'red' } }];
  await refused(await buildAppPackage({ key, manifest: sampleManifest({ actions }) }), 'actions[0].applies.colour', /unknown field/);
  await refused(await buildAppPackage({ key, manifest: sampleManifest({ call_timeout_ms: 60_000 }) }), 'call_timeout_ms', /30000/);
  await refused(await buildAppPackage({ key, manifest: sampleManifest({ http_hosts: ['api.example.com'] }) }), 'http_hosts', /http permission/);
});

test('language-pack limits: 1 MiB per language, 4 KiB per string, 128-byte keys', async () => {
  const big: Record<string, string> = { 'action.greet': 'hi' };
  for (let i = 0; i < 300; i++) big[`k${i}`] = 'x'.repeat(4000);
  await refused(await buildAppPackage({ key, languages: { en: big } }), 'i18n/en.json', /larger than 1048576/);
  await refused(await buildAppPackage({ key, languages: { en: { 'action.greet': 'x'.repeat(5 * 1024) } } }), 'i18n/en.json: action.greet', /4096 bytes/);
  await refused(await buildAppPackage({ key, languages: { en: { 'action.greet': 'hi', ['k'.repeat(129)]: 'x' } } }), /^i18n\/en\.json: k+…$/, /128 bytes/);
  // Exactly at the limits is fine.
  await readAppPackage(await buildAppPackage({ key, languages: { en: { 'action.greet': 'x'.repeat(4096), ['k'.repeat(128)]: 'y' } } }), {
    trusted,
    version: VERSION,
  });
  // 4 MiB across languages: five packs of ~900 KiB each.
  const packs: Record<string, Record<string, string>> = {};
  for (const lang of ['en', 'tr', 'de', 'fr', 'es']) {
    packs[lang] = { 'action.greet': 'hi' };
    for (let i = 0; i < 225; i++) packs[lang][`k${i}`] = 'x'.repeat(4000);
  }
  await refused(await buildAppPackage({ key, languages: packs }), 'i18n', /4194304 bytes in all/);
  await refused(await buildAppPackage({ key, languages: { tr: { 'action.greet': 'x' } } }), 'default_language', /no pack/);
});

test('an incompatible filex_range is refused', async () => {
  const pkg = await buildAppPackage({ key, manifest: sampleManifest({ filex_range: '^2.0.0' }) });
  await refused(pkg, 'filex_range', /version 0\.1\.0; the app needs \^2\.0\.0/);
  await readAppPackage(pkg, { trusted, version: '2.3.1' });
  await refused(await buildAppPackage({ key, manifest: sampleManifest({ filex_range: 'soon' }) }), 'filex_range', /semver range/);
});

test('traversal and unknown entry names are refused', async () => {
  const hostile = (name: string) => buildAppPackage({ key, extra: { ['Q'.repeat(name.length)]: 'x' }, hostileNames: { ['Q'.repeat(name.length)]: name } });
  await refused(await hostile('../evil.js'), '../evil.js', /unsafe entry name \(traversal\)/);
  await refused(await hostile('icons/../../x.png'), 'icons/../../x.png', /traversal/);
  await refused(await hostile('/etc/passwd'), '/etc/passwd', /absolute/);
  await refused(await buildAppPackage({ key, extra: { 'node_modules/x.js': 'x' } }), 'node_modules/x.js', /unknown entry/);
  await refused(await buildAppPackage({ key, extra: { 'code.js2': 'x' } }), 'code.js2', /unknown entry/);
  await refused(await buildAppPackage({ key, code: 'x'.repeat(2 * 1024 * 1024 + 1) }), 'code.js', /larger than/);
});

test('peekAppManifest reads a signed package without its key (a store build), and refuses an unsigned one', async () => {
  const other = publisherKey('someone');
  const m = await peekAppManifest(await buildAppPackage({ key: other, manifest: sampleManifest({ publisher: 'someone', version: '2.0.0' }) }));
  assert.deepEqual([m.id, m.version, m.publisher], ['hello', '2.0.0', 'someone']);
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const zip = new ZipWriter(sink);
  const manifest = Buffer.from(JSON.stringify(sampleManifest()));
  await zip.addFile('manifest.json', Readable.from([manifest]), { size: manifest.length, mtime: Date.UTC(2026, 0, 1), compress: false });
  await zip.finish();
  sink.end();
  await assert.rejects(peekAppManifest(Buffer.concat(chunks)), (e: AppError) => (e.details as { field: string }).field === 'signature.json');
});
