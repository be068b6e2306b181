import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { loadConfig, ConfigError } from './index';
import { tempDir } from '../../test/helpers/tools';

test('defaults and zero meanings', () => {
  const c = loadConfig({ SERVICE_DATA_DIR: '/tmp/x', SERVICE_THUMBS_URL_TTL: '0', SERVICE_UPDATE_INTERVAL: '10m' });
  assert.equal(c.port, 5212);
  assert.equal(c.host, '0.0.0.0');
  assert.equal(c.thumbsUrlTtl, 86_400_000);
  assert.equal(c.updateInterval, 3_600_000, 'raised to 1h');
  assert.equal(c.maxUploadBytes, 5368709120);
  assert.equal(c.multiTenant, false, 'single-tenant unless asked (docs/tenants.md)');
  assert.equal(loadConfig({ SERVICE_DATA_DIR: '/tmp/x', SERVICE_MULTI_TENANT: '1' }).multiTenant, true);
  assert.ok(Object.isFrozen(c));
});

test('every bad key is named', () => {
  try {
    loadConfig({ SERVICE_PORT: 'abc', SERVICE_LOG_LEVEL: 'loud', SERVICE_PUBLIC_URL: 'ftp://x' });
    assert.fail('should throw');
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    assert.deepEqual(e.problems.map((p) => p.key).sort(), ['SERVICE_LOG_LEVEL', 'SERVICE_PORT', 'SERVICE_PUBLIC_URL']);
  }
});

test('YAML file with nested sections; env wins; unknown keys refused', () => {
  const { dir, cleanup } = tempDir();
  try {
    const f = `${dir}/c.yaml`;
    writeFileSync(f, 'port: 8080\nupdate:\n  channel: beta\n  interval: 2h\ndefault_storage:\n  config: {path: /srv}\n');
    const c = loadConfig({ SERVICE_CONFIG: f, SERVICE_PORT: '9090' });
    assert.equal(c.port, 9090);
    assert.equal(c.updateChannel, 'beta');
    assert.equal(c.updateInterval, 7_200_000);
    assert.deepEqual(c.defaultStorageConfig, { path: '/srv' });
    writeFileSync(f, 'prot: 1\n');
    assert.throws(
      () => loadConfig({ SERVICE_CONFIG: f }),
      (e: ConfigError) => e.problems[0].key.startsWith('prot'),
    );
  } finally {
    cleanup();
  }
});

test('SFTP listen address: host:port or :port, off when empty', () => {
  assert.equal(loadConfig({ SERVICE_DATA_DIR: '/tmp/x' }).sftpListen, '');
  assert.equal(loadConfig({ SERVICE_DATA_DIR: '/tmp/x', SERVICE_SFTP_LISTEN: ':2022' }).sftpListen, ':2022');
  assert.equal(loadConfig({ SERVICE_DATA_DIR: '/tmp/x', SERVICE_SFTP_LISTEN: '[::1]:2022' }).sftpListen, '[::1]:2022');
  for (const bad of ['2022', 'host', 'a b:22']) {
    assert.throws(
      () => loadConfig({ SERVICE_DATA_DIR: '/tmp/x', SERVICE_SFTP_LISTEN: bad }),
      (e: ConfigError) => e.problems[0].key === 'SERVICE_SFTP_LISTEN',
      bad,
    );
  }
});

test('docserver settings: config file keys external_services.docserver.* and the environment', () => {
  const { dir, cleanup } = tempDir();
  try {
    const f = `${dir}/c.yaml`;
    writeFileSync(
      f,
      'external_services:\n  docserver:\n    url: http://docs.example.test:8080/\n    jwt_secret: s3cret\n    callback_url: http://files.lan:5212\n',
    );
    const c = loadConfig({ SERVICE_DATA_DIR: dir, SERVICE_CONFIG: f });
    assert.equal(c.docserverUrl, 'http://docs.example.test:8080');
    assert.equal(c.docserverJwt, 's3cret');
    assert.equal(c.docserverCallbackUrl, 'http://files.lan:5212');
    const e = loadConfig({ SERVICE_DATA_DIR: dir, SERVICE_CONFIG: f, SERVICE_DOCSERVER_URL: 'https://office.lan' });
    assert.equal(e.docserverUrl, 'https://office.lan', 'the environment wins');
  } finally {
    cleanup();
  }
});

test('volume check interval: 5s by default, 0 turns it off, 1s..300s otherwise', () => {
  assert.equal(loadConfig({ SERVICE_DATA_DIR: '/tmp/x' }).volumeCheckInterval, 5000);
  assert.equal(loadConfig({ SERVICE_DATA_DIR: '/tmp/x', SERVICE_VOLUME_CHECK_INTERVAL: '0' }).volumeCheckInterval, 0);
  assert.equal(loadConfig({ SERVICE_DATA_DIR: '/tmp/x', SERVICE_VOLUME_CHECK_INTERVAL: '2m' }).volumeCheckInterval, 120_000);
  for (const bad of ['500ms', '10m', 'soon']) {
    assert.throws(
      () => loadConfig({ SERVICE_DATA_DIR: '/tmp/x', SERVICE_VOLUME_CHECK_INTERVAL: bad }),
      (e: unknown) => e instanceof ConfigError && e.problems[0].key === 'SERVICE_VOLUME_CHECK_INTERVAL',
      bad,
    );
  }
});
