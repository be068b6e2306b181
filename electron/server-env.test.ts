import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/helpers/tools';
import { buildServerEnv, FirstRunMarker } from './server-env';
import { DEFAULT_SETTINGS } from './desktop-settings';

test('settings become SERVICE_* variables; LAN access picks the bind address', () => {
  const env = buildServerEnv({
    settings: { ...DEFAULT_SETTINGS, port: 6000 },
    dataDir: '/d',
    firstRun: null,
    base: { PATH: '/bin', SERVICE_SMTP_HOST: 'mail' },
  });
  assert.equal(env.SERVICE_HOST, '0.0.0.0');
  assert.equal(env.SERVICE_PORT, '6000');
  assert.equal(env.SERVICE_DATA_DIR, '/d');
  assert.equal(env.SERVICE_INSTALL_MODE, 'desktop');
  assert.equal(env.SERVICE_SMTP_HOST, 'mail', 'user-set variables pass through');
  assert.equal(env.PATH, '/bin');
  assert.equal(env.SERVICE_PUBLIC_URL, undefined);
  const local = buildServerEnv({ settings: { ...DEFAULT_SETTINGS, lanAccess: false }, dataDir: '/d', firstRun: null, base: {} });
  assert.equal(local.SERVICE_HOST, '127.0.0.1');
});

test('a public URL adds the loopback public-links listener the tunnel points at', () => {
  const env = buildServerEnv({
    settings: { ...DEFAULT_SETTINGS, publicUrl: 'https://t.example.net', publicPort: 7001 },
    dataDir: '/d',
    firstRun: null,
    base: {},
  });
  assert.equal(env.SERVICE_PUBLIC_URL, 'https://t.example.net');
  assert.equal(env.SERVICE_PUBLIC_LISTEN, '127.0.0.1:7001');
});

test('only the first run carries the bootstrap secret and the default storage seed', () => {
  const first = buildServerEnv({
    settings: DEFAULT_SETTINGS,
    dataDir: '/d',
    firstRun: { secret: 's3cret', storagePath: '/home/u/Filedock' },
    base: { SERVICE_DESKTOP_BOOTSTRAP: 'stale' },
  });
  assert.equal(first.SERVICE_DESKTOP_BOOTSTRAP, 's3cret');
  assert.equal(first.SERVICE_DEFAULT_STORAGE_DRIVER, 'local');
  assert.equal(first.SERVICE_DEFAULT_STORAGE_NAME, 'Filedock');
  assert.equal(first.SERVICE_DEFAULT_STORAGE_PATH, '/home/u/Filedock');
  const later = buildServerEnv({ settings: DEFAULT_SETTINGS, dataDir: '/d', firstRun: null, base: { SERVICE_DESKTOP_BOOTSTRAP: 'stale' } });
  assert.equal(later.SERVICE_DESKTOP_BOOTSTRAP, undefined, 'an inherited secret is never passed on');
});

test('the first-run marker keeps one secret until finished, then never again', () => {
  const tmp = tempDir('filedock-first-');
  try {
    const m = new FirstRunMarker(join(tmp.dir, 'ud'), join(tmp.dir, 'home'));
    const a = m.begin();
    assert.ok(a && a.secret.length >= 40);
    assert.equal(m.begin()?.secret, a.secret);
    assert.ok(existsSync(join(tmp.dir, 'home', 'Filedock')));
    m.finish();
    assert.equal(m.begin(), null);
    assert.equal(new FirstRunMarker(join(tmp.dir, 'ud'), join(tmp.dir, 'home')).begin(), null);
  } finally {
    tmp.cleanup();
  }
});
