/**
 * The two version-range checks, a storage plugin's `service_range` (checked at
 * its handshake) and an app package's `filex_range` (checked when it is read),
 * give the same answer for a pre-release service version: both go through
 * server/lib/versions.ts (npm semver). Real parts: the example plugin process
 * and a signed app package.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isAppError } from '../../server/errors';
import { readAppPackage } from '../../server/plugins/package/package';
import { loadPluginDriver } from '../../server/storage/drivers/plugin';
import { buildAppPackage, publisherKey, sampleManifest } from '../helpers/app-package';
import { tempDir } from '../helpers/tools';

const EXAMPLE = resolve('examples/plugin-driver/localdir.mjs');
const EXAMPLE_RANGE = "const SERVICE_RANGE = '>=0.1.0 <1.0.0';";
const key = publisherKey('acme');
const fast = { callMs: 3000, startMs: 3000, backoffMs: 50, maxBackoffMs: 400 };

/** [running version, range, accepted]: a pre-release sits just below its release. */
const CASES: Array<[string, string, boolean]> = [
  ['1.0.0-rc.1', '>=0.1.0 <1.0.0', true],
  ['1.0.0-rc.1', '^1.0.0', false],
  ['1.2.0-rc.1', '1.2.0+build.7', false],
  ['0.2.0-beta.3', '>=0.1.0', true],
];

let tmp: { dir: string; cleanup: () => void };
before(() => {
  tmp = tempDir('filedock-ranges-');
});
after(() => tmp?.cleanup());

/** Whether the example plugin, its range replaced by `range`, passes the handshake on `version`. */
async function pluginAccepts(version: string, range: string, i: number): Promise<boolean> {
  const src = readFileSync(EXAMPLE, 'utf8');
  assert.ok(src.includes(EXAMPLE_RANGE), 'the example plugin declares its range');
  const program = join(tmp.dir, `ranged-${i}.mjs`);
  writeFileSync(program, src.replace(EXAMPLE_RANGE, `const SERVICE_RANGE = ${JSON.stringify(range)};`));
  return loadPluginDriver(program, { serviceVersion: version, timeouts: fast }).then(
    () => true,
    (e) => {
      if (isAppError(e) && e.code === 'unsupported' && e.params.reason === 'service_range') return false;
      throw e;
    },
  );
}

/** Whether an app package with this `filex_range` is accepted on `version`. */
async function appAccepts(version: string, range: string): Promise<boolean> {
  const bytes = await buildAppPackage({ key, manifest: sampleManifest({ filex_range: range }) });
  return readAppPackage(bytes, { trusted: [key.trusted], version }).then(
    () => true,
    (e) => {
      if (isAppError(e) && e.code === 'validation_failed' && (e.details as { field?: string }).field === 'filex_range') return false;
      throw e;
    },
  );
}

test('a pre-release service version: plugins and apps are accepted and refused alike', async () => {
  for (const [i, [version, range, accepted]] of CASES.entries()) {
    assert.equal(await pluginAccepts(version, range, i), accepted, `plugin service_range ${range} on ${version}`);
    assert.equal(await appAccepts(version, range), accepted, `app filex_range ${range} on ${version}`);
  }
});
