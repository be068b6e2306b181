import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRange, satisfies } from './semver';

test('filex_range: the range forms a manifest may use', () => {
  const yes: [string, string][] = [
    ['0.1.0', '^0.1.0'], ['0.1.9', '^0.1.0'], ['1.4.2', '^1.2.0'], ['1.2.9', '~1.2.3'], ['0.1.0', '>=0.1.0 <1.0.0'],
    ['2.0.0', '1.x || >=2.0.0'], ['1.7.0', '1.x'], ['1.2.5', '1.2.*'], ['3.0.0', '*'], ['0.1.0', '0.1.0'], ['0.5.0', '>= 0.1.0'],
  ];
  const no: [string, string][] = [
    ['0.2.0', '^0.1.0'], ['2.0.0', '^1.2.0'], ['1.3.0', '~1.2.3'], ['1.0.0', '>=0.1.0 <1.0.0'], ['0.9.0', '1.x || >=2.0.0'], ['0.0.4', '^0.0.3'],
  ];
  for (const [v, r] of yes) assert.equal(satisfies(v, r), true, `${v} in ${r}`);
  for (const [v, r] of no) assert.equal(satisfies(v, r), false, `${v} not in ${r}`);
  for (const bad of ['', 'banana', '>>1.0.0', '1.0.0 ||', '^x.1']) assert.equal(parseRange(bad), null, bad);
});
