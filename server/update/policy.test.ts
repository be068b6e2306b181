import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { inWindow, parseWindow, planUpdate, resolvePolicy, type PlanInput } from './policy';
import type { Release } from './manifest';
import { compareVersions, moveKind, parseVersion } from './semver';
import { isAppError } from '../errors';

const asset = { os: 'linux', arch: 'x64', url: 'http://127.0.0.1/a.tar.gz', sha256: 'a'.repeat(64) };
const rel = (version: string, over: Partial<Release> = {}): Release => ({
  version,
  date: '2026-01-01',
  auto_ok: true,
  migrations: false,
  severity: 'normal',
  notes: '',
  notes_url: '',
  image: '',
  assets: [asset],
  ...over,
});
const input = (over: Partial<PlanInput>): PlanInput => ({
  current: '1.2.0',
  releases: [],
  policy: 'patch',
  os: 'linux',
  arch: 'x64',
  needsAsset: true,
  selfReplaceable: true,
  window: null,
  now: new Date(2026, 0, 1, 12, 0),
  ...over,
});

describe('versions', () => {
  test('parse, compare and classify x.y.z', () => {
    assert.deepEqual(parseVersion('v1.10.3'), { major: 1, minor: 10, patch: 3 });
    assert.equal(parseVersion('1.2'), null);
    assert.equal(parseVersion('1.2.3-beta'), null);
    assert.ok(compareVersions('1.10.0', '1.9.9') > 0);
    assert.equal(moveKind('1.2.3', '1.2.4'), 'patch');
    assert.equal(moveKind('1.2.3', '1.3.0'), 'minor');
    assert.equal(moveKind('1.2.3', '2.0.0'), 'major');
    assert.equal(moveKind('1.2.3', '1.2.3'), 'none');
  });
});

describe('policy', () => {
  test('AUTO_UPGRADE selects patch; an explicit policy wins; manual is the default', () => {
    assert.equal(resolvePolicy('', true), 'patch');
    assert.equal(resolvePolicy('manual', true), 'manual');
    assert.equal(resolvePolicy('off', true), 'off');
    assert.equal(resolvePolicy('', false), 'manual');
  });

  test('the update window, including one that wraps past midnight', () => {
    const w = parseWindow('03:00-05:00')!;
    assert.equal(inWindow(w, new Date(2026, 0, 1, 3, 0)), true);
    assert.equal(inWindow(w, new Date(2026, 0, 1, 4, 59)), true);
    assert.equal(inWindow(w, new Date(2026, 0, 1, 5, 0)), false);
    const night = parseWindow('22:30-01:00')!;
    assert.equal(inWindow(night, new Date(2026, 0, 1, 23, 0)), true);
    assert.equal(inWindow(night, new Date(2026, 0, 1, 0, 30)), true);
    assert.equal(inWindow(night, new Date(2026, 0, 1, 12, 0)), false);
    assert.equal(parseWindow(''), null);
    for (const bad of ['3-5', '25:00-01:00', '03:00-03:00'])
      assert.throws(
        () => parseWindow(bad),
        (e) => isAppError(e) && e.code === 'validation_failed',
      );
  });

  test('a patch with auto_ok and no migration applies automatically', () => {
    const p = planUpdate(input({ releases: [rel('1.2.1'), rel('1.2.2')] }));
    assert.equal(p.auto.target?.version, '1.2.2');
    assert.deepEqual(p.auto.blockedBy, []);
  });

  test('a migration in any skipped release blocks the automatic upgrade', () => {
    const p = planUpdate(input({ releases: [rel('1.2.1', { migrations: true }), rel('1.2.2')] }));
    assert.equal(p.auto.target?.version, '1.2.2');
    assert.deepEqual(p.auto.blockedBy, ['migrations']);
    // A migration in a release already installed (or beyond the target) does not count.
    const q = planUpdate(input({ current: '1.2.1', releases: [rel('1.2.1', { migrations: true }), rel('1.2.2'), rel('1.3.0', { migrations: true })] }));
    assert.deepEqual(q.auto.blockedBy, []);
  });

  test('each condition of the spec blocks on its own', () => {
    const releases = [rel('1.2.1')];
    assert.deepEqual(planUpdate(input({ releases: [rel('1.2.1', { auto_ok: false })] })).auto.blockedBy, ['not_auto_ok']);
    assert.deepEqual(planUpdate(input({ releases, selfReplaceable: false })).auto.blockedBy, ['install_mode']);
    assert.deepEqual(planUpdate(input({ releases, window: parseWindow('03:00-05:00') })).auto.blockedBy, ['window']);
    assert.deepEqual(planUpdate(input({ releases, window: parseWindow('03:00-05:00'), now: new Date(2026, 0, 1, 3, 30) })).auto.blockedBy, []);
    assert.deepEqual(planUpdate(input({ releases, busy: true })).auto.blockedBy, ['busy'], 'a copy or extraction running holds the automatic upgrade');
    const manual = planUpdate(input({ releases, policy: 'manual' }));
    assert.equal(manual.auto.target, null);
    assert.deepEqual(manual.auto.blockedBy, ['policy']);
    assert.equal(manual.candidate?.version, '1.2.1');
  });

  test('the patch policy never takes a minor; the minor policy does from 1.x on', () => {
    const releases = [rel('1.2.1'), rel('1.3.0')];
    assert.equal(planUpdate(input({ releases })).auto.target?.version, '1.2.1');
    assert.equal(planUpdate(input({ releases, policy: 'minor' })).auto.target?.version, '1.3.0');
  });

  test('while on 0.x a minor is never automatic, even under the minor policy', () => {
    const p = planUpdate(input({ current: '0.2.0', policy: 'minor', releases: [rel('0.3.0')] }));
    assert.equal(p.auto.target, null);
    assert.deepEqual(p.auto.blockedBy, ['zero_major']);
    assert.equal(p.candidate?.version, '0.3.0', 'still offered on request');
    const withPatch = planUpdate(input({ current: '0.2.0', policy: 'minor', releases: [rel('0.2.1'), rel('0.3.0')] }));
    assert.equal(withPatch.auto.target?.version, '0.2.1');
  });

  test('a major is announced but never a candidate', () => {
    const p = planUpdate(input({ releases: [rel('1.2.1'), rel('2.0.0')] }));
    assert.equal(p.latest?.version, '2.0.0');
    assert.equal(p.latestKind, 'major');
    assert.equal(p.candidate?.version, '1.2.1');
  });

  test('releases without an asset for this OS/CPU or above our min_version are not installable', () => {
    const other = rel('1.2.1', { assets: [{ ...asset, os: 'darwin', arch: 'arm64' }] });
    const p = planUpdate(input({ releases: [other] }));
    assert.equal(p.latest?.version, '1.2.1');
    assert.equal(p.candidate, null);
    assert.equal(p.auto.target, null);
    assert.equal(planUpdate(input({ releases: [other], needsAsset: false })).candidate?.version, '1.2.1');
    assert.equal(planUpdate(input({ releases: [rel('1.2.1', { min_version: '1.2.0' }), rel('1.2.5', { min_version: '1.2.1' })] })).candidate?.version, '1.2.1');
  });
});
