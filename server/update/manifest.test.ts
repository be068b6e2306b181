import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assetFor, ManifestError, parseManifest } from './manifest';

const sha = 'AB'.repeat(32);
const release = (over: Record<string, unknown> = {}) => ({
  version: '1.0.1',
  date: '2026-02-01',
  auto_ok: true,
  migrations: false,
  severity: 'security',
  notes: 'fixes',
  notes_url: 'https://example.invalid/n',
  image: 'filedock:1.0.1',
  assets: [{ os: 'linux', arch: 'x64', url: 'assets/s.tar.gz', sha256: sha }],
  ...over,
});

test('a valid manifest: sorted, relative URLs resolved, digests lower-cased, unknown fields dropped', () => {
  const m = parseManifest(
    { channel: 'stable', extra: 1, releases: [release({ future_field: true }), release({ version: '1.0.0', notes: null })] },
    'http://127.0.0.1:9/feed/manifest.json',
  );
  assert.deepEqual(
    m.releases.map((r) => r.version),
    ['1.0.0', '1.0.1'],
  );
  assert.equal(m.releases[0].notes, '');
  assert.equal(m.releases[1].assets[0].url, 'http://127.0.0.1:9/feed/assets/s.tar.gz');
  assert.equal(m.releases[1].assets[0].sha256, sha.toLowerCase());
  assert.equal('future_field' in m.releases[1], false);
  assert.equal(assetFor(m.releases[1], 'linux', 'x64')?.sha256, sha.toLowerCase());
  assert.equal(assetFor(m.releases[1], 'win32', 'x64'), null);
});

test('broken manifests name the field at fault', () => {
  const base = 'http://127.0.0.1:9/m.json';
  const cases: Array<[unknown, RegExp]> = [
    [null, /\(root\)/],
    [{ channel: 'stable' }, /releases/],
    [{ channel: 'stable', releases: [release({ version: '1.0' })] }, /releases\.0\.version/],
    [{ channel: 'stable', releases: [release({ assets: [{ os: 'linux', arch: 'x64', url: 'a', sha256: 'xyz' }] })] }, /sha256/],
    [{ channel: 'stable', releases: [release({ auto_ok: 'yes' })] }, /auto_ok/],
    [{ channel: 'stable', releases: [release(), release()] }, /twice/],
    [{ channel: 'stable', releases: [release({ assets: [{ os: 'linux', arch: 'x64', url: 'file:///etc/passwd', sha256: sha }] })] }, /http/],
  ];
  for (const [body, re] of cases)
    assert.throws(
      () => parseManifest(body, base),
      (e) => e instanceof ManifestError && re.test(e.message),
    );
});
