/**
 * `service install-systemd` and the unit it writes, checked by the real
 * `systemd-analyze` (Debian package `systemd`; it needs no running systemd):
 * `verify` must pass without a single warning (it exits 0 on unknown keys and
 * bad values, so any output fails), and `security --offline` scores it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { needTool, tempDir } from '../helpers/tools';
import { SERVICE_CLI } from '../helpers/child-server';
import { DEFAULT_UNIT, renderUnit } from '../../server/cli/systemd-unit';

const root = new URL('../..', import.meta.url).pathname;
const skip = needTool('systemd-analyze', 'systemd') ?? undefined;
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [...SERVICE_CLI, 'install-systemd', ...args], {
    cwd: root,
    env: { ...process.env, SERVICE_DATA_DIR: '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });

/** `systemd-analyze verify` on a unit file: its exit status and everything it printed. */
function verify(file: string): { status: number | null; output: string } {
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: (r.stdout + r.stderr).trim() };
}

/** The overall exposure `systemd-analyze security --offline=yes` gives the unit (0 best, 10 worst). */
function exposure(file: string): number {
  const r = spawnSync('systemd-analyze', ['security', '--offline=yes', file], { encoding: 'utf8', timeout: 60_000 });
  const m = /Overall exposure level for \S+: ([\d.]+)/.exec(r.stdout);
  assert.ok(m, `no exposure score in: ${r.stdout}${r.stderr}`);
  return Number(m[1]);
}

describe('systemd unit', () => {
  test('resources/systemd/filedock.service is the rendering for the documented layout', () => {
    assert.equal(readFileSync(join(root, 'resources/systemd/filedock.service'), 'utf8'), renderUnit(DEFAULT_UNIT));
  });

  test('the unit a bundle install gets verifies cleanly and is hardened', { skip }, () => {
    const { dir, cleanup } = tempDir();
    try {
      const bundleRoot = join(dir, 'filedock', 'server');
      mkdirSync(join(bundleRoot, 'bin'), { recursive: true });
      writeFileSync(join(bundleRoot, 'bin/service'), '#!/bin/sh\n');
      chmodSync(join(bundleRoot, 'bin/service'), 0o755);
      const file = join(dir, 'filedock.service');
      const unit = renderUnit({ ...DEFAULT_UNIT, exec: { bundleRoot }, storages: ['/home/alice/Photos', '/mnt/nas/family'] });
      writeFileSync(file, unit);
      assert.deepEqual(verify(file), { status: 0, output: '' });
      for (const line of [
        'ProtectSystem=strict',
        'ProtectHome=tmpfs',
        'NoNewPrivileges=yes',
        'PrivateTmp=yes',
        'LockPersonality=yes',
        'Restart=on-failure',
        'ReadWritePaths=/var/lib/filedock',
        `ReadWritePaths=${join(dir, 'filedock')}`,
        'BindPaths=-/home/alice/Photos',
        'ReadWritePaths=-/mnt/nas/family',
      ])
        assert.ok(unit.split('\n').includes(line), `missing ${line}`);
      assert.doesNotMatch(unit, /^MemoryDenyWriteExecute=/m, 'V8 needs writable-then-executable memory');
      const homeData = renderUnit({ ...DEFAULT_UNIT, exec: { bundleRoot }, dataDir: '/home/alice/filedock-data' });
      assert.ok(homeData.split('\n').includes('BindPaths=/home/alice/filedock-data'), 'a data folder under /home is bound in: ProtectHome= hides it');
      writeFileSync(join(dir, 'home-data.service'), homeData);
      assert.deepEqual(verify(join(dir, 'home-data.service')), { status: 0, output: '' });
      const score = exposure(file);
      console.log(`systemd-analyze security --offline: exposure ${score}`);
      assert.ok(score <= 2.5, `exposure ${score}`);
    } finally {
      cleanup();
    }
  });

  test('a warning from systemd-analyze fails the check', { skip }, () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'bad.service');
      writeFileSync(
        file,
        renderUnit({ ...DEFAULT_UNIT, exec: { node: process.execPath, cli: join(root, 'dist/server/cli.js') } }).replace('LockPersonality', 'LockPersonalty'),
      );
      const r = verify(file);
      assert.equal(r.status, 0, 'verify exits 0 on an unknown key');
      assert.match(r.output, /Unknown key 'LockPersonalty'/);
    } finally {
      cleanup();
    }
  });
});

describe('service install-systemd', () => {
  test('writes the unit for this checkout, keeps an identical one, refuses a different one without --force', { skip }, () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'filedock.service');
      const first = run(['--output', file, '--user', 'files', '--storage', '/srv/media/'], { SERVICE_DATA_DIR: join(dir, 'data') });
      assert.equal(first.status, 0, first.stderr);
      assert.match(first.stdout, /wrote .*filedock\.service/);
      assert.match(first.stdout, /systemctl daemon-reload && systemctl enable --now filedock/);
      assert.match(first.stdout, /useradd --system .* files/);
      const unit = readFileSync(file, 'utf8');
      assert.match(unit, new RegExp(`^ExecStart=${process.execPath} ${join(root, 'dist/server/cli.js')} serve$`, 'm'));
      assert.match(unit, /^User=files$/m);
      assert.match(unit, new RegExp(`^ReadWritePaths=${join(dir, 'data')}$`, 'm'));
      assert.match(unit, /^ReadWritePaths=-\/srv\/media$/m);
      assert.deepEqual(verify(file), { status: 0, output: '' });

      const again = run(['--output', file, '--user', 'files', '--storage', '/srv/media'], { SERVICE_DATA_DIR: join(dir, 'data') });
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, /already this unit/);

      const other = run(['--output', file, '--data-dir', '/var/lib/other']);
      assert.equal(other.status, 1);
      assert.match(other.stderr, /exists and differs.*--force/);
      assert.equal(readFileSync(file, 'utf8'), unit, 'kept');
      const forced = run(['--output', file, '--data-dir', '/var/lib/other', '--force']);
      assert.equal(forced.status, 0, forced.stderr);
      assert.match(readFileSync(file, 'utf8'), /^WorkingDirectory=\/var\/lib\/other$/m);

      const printed = run(['--output', '-']);
      assert.equal(printed.status, 0, printed.stderr);
      assert.match(printed.stdout, /^ReadWritePaths=\/var\/lib\/filedock$/m, 'default data folder without SERVICE_DATA_DIR');
    } finally {
      cleanup();
    }
  });

  test('from a bundle: starts its launcher, may write the folder holding it, refuses a bundle without a folder of its own', { skip }, () => {
    const { dir, cleanup } = tempDir('svc-unit-');
    try {
      /** A bundle-shaped folder whose node/bin/node is this Node, so the command finds itself inside it. */
      const bundleAt = (bundle: string) => {
        mkdirSync(join(bundle, 'node/bin'), { recursive: true });
        mkdirSync(join(bundle, 'bin'));
        writeFileSync(join(bundle, 'bin/service'), '#!/bin/sh\n');
        chmodSync(join(bundle, 'bin/service'), 0o755);
        const node = join(bundle, 'node/bin/node');
        try {
          linkSync(process.execPath, node);
        } catch {
          copyFileSync(process.execPath, node);
          chmodSync(node, 0o755);
        }
        return (args: string[]) =>
          spawnSync(node, [...SERVICE_CLI, 'install-systemd', ...args], {
            cwd: root,
            env: { ...process.env, SERVICE_DATA_DIR: '' },
            encoding: 'utf8',
            timeout: 60_000,
          });
      };
      const bundle = join(dir, 'filedock', 'server');
      const file = join(dir, 'filedock.service');
      const r = bundleAt(bundle)(['--output', file]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`chown -R filedock:filedock ${join(dir, 'filedock')}\n`));
      const unit = readFileSync(file, 'utf8');
      assert.match(unit, new RegExp(`^ExecStart=${bundle}/bin/service serve$`, 'm'));
      assert.match(unit, new RegExp(`^ReadWritePaths=${join(dir, 'filedock')}$`, 'm'));
      assert.match(unit, /^ExecStartPre=/m);
      assert.deepEqual(verify(file), { status: 0, output: '' });

      const flat = bundleAt(join(dir, 'opt-like'))(['--output', '-']);
      assert.equal(flat.status, 64);
      assert.match(flat.stderr, /folder of its own/);
    } finally {
      cleanup();
    }
  });

  test('bad input is refused with usage errors and writes nothing', () => {
    for (const args of [
      ['--user', 'Root Admin'],
      ['--data-dir', 'relative/data'],
      ['--storage', '/srv/my files'],
      ['--storage', '/srv/../etc'],
      ['--data-dir', '/'],
      ['extra'],
    ]) {
      const r = run(['--output', '/nonexistent-dir/filedock.service', ...args]);
      assert.equal(r.status, 64, `${args.join(' ')}: ${r.stderr}`);
    }
  });
});
