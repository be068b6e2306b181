import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config';
import { tempDir } from '../../test/helpers/tools';
import { bundleRootOf, updaterOptionsFromConfig } from './index';

test('the bundle root is found from the bundled Node binary, and only there', () => {
  const { dir, cleanup } = tempDir('filedock-bundle-');
  try {
    const root = join(dir, 'server');
    mkdirSync(join(root, 'bin'), { recursive: true });
    mkdirSync(join(root, 'node', 'bin'), { recursive: true });
    writeFileSync(join(root, 'bin', 'service'), '#!/bin/sh\n');
    chmodSync(join(root, 'bin', 'service'), 0o755);
    assert.equal(bundleRootOf(join(root, 'node', 'bin', 'node')), root);
    assert.equal(bundleRootOf(join(root, 'node', 'node.exe')), root);
    assert.equal(bundleRootOf('/usr/bin/node'), null);
    assert.equal(bundleRootOf(join(dir, 'other', 'node', 'bin', 'node')), null);
  } finally {
    cleanup();
  }
});

test('config keys map onto the updater options; AUTO_UPGRADE selects patch, an explicit policy wins', () => {
  const { dir, cleanup } = tempDir('filedock-updcfg-');
  try {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'update:\n  channel: beta\n  interval: 10m\n  window: "03:00-05:00"\n');
    const base = { SERVICE_DATA_DIR: dir, SERVICE_CONFIG: file, AUTO_UPGRADE: 'true', SERVICE_UPDATE_MANIFEST_URL: 'http://127.0.0.1:1/m.json' };
    const o = updaterOptionsFromConfig(loadConfig(base), '/usr/bin/node');
    assert.equal(o.channel, 'beta');
    assert.equal(o.intervalMs, 3_600_000, 'raised to one hour');
    assert.equal(o.window, '03:00-05:00');
    assert.equal(o.policy, 'patch');
    assert.equal(o.installRoot, undefined);
    assert.equal(o.check, true);
    assert.equal(updaterOptionsFromConfig(loadConfig({ ...base, SERVICE_UPDATE_POLICY: 'manual', SERVICE_UPDATE_CHECK: '0' })).policy, 'manual');
    assert.equal(updaterOptionsFromConfig(loadConfig({ ...base, SERVICE_UPDATE_CHECK: '0' })).check, false);
  } finally {
    cleanup();
  }
});
