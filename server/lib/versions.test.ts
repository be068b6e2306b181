import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareVersions, parseRange, satisfies } from './versions';

test('comparator sets, caret, tilde, wildcards and alternatives', () => {
  const cases: Array<[string, string, boolean]> = [
    ['0.1.0', '>=0.1.0 <1.0.0', true],
    ['1.0.0', '>=0.1.0 <1.0.0', false],
    ['0.3.9', '^0.3.1', true],
    ['0.4.0', '^0.3.1', false],
    ['1.9.0', '^1.2.3', true],
    ['2.0.0', '^1.2.3', false],
    ['0.0.4', '^0.0.3', false],
    ['1.4.7', '~1.4', true],
    ['1.5.0', '~1.4', false],
    ['1.2.9', '~1.2.3', true],
    ['1.3.0', '~1.2.3', false],
    ['0.1.0', '0.x', true],
    ['1.0.0', '0.x', false],
    ['1.2.5', '1.2.*', true],
    ['3.1.4', '*', true],
    ['0.1.0', '9.0.0 || >= 0.1.0 < 0.2', true],
    ['2.0.0', '1.x || >=2.0.0', true],
    ['0.9.0', '1.x || >=2.0.0', false],
    ['0.1.0', '0.1.0', true],
    ['0.1.1', '0.1.0', false],
    ['1.2.9', '<=1.2', true],
    ['1.3.0', '<=1.2', false],
    ['0.1.0', 'banana', false],
    ['0.1.0', '', false],
    ['banana', '*', false],
  ];
  for (const [v, r, want] of cases) assert.equal(satisfies(v, r), want, `${v} in ${r}`);
  for (const bad of ['', 'banana', '>>1.0.0', '1.0.0 ||', '|| 1.0.0', '^x.1', 'x'.repeat(257)]) assert.equal(parseRange(bad), null, bad);
});

test('pre-releases sit just below their release, in ranges and in order', () => {
  assert.equal(satisfies('1.0.0-rc.1', '>=0.1.0 <1.0.0'), true);
  assert.equal(satisfies('1.0.0-rc.1', '^1.0.0'), false);
  assert.equal(satisfies('1.3.0-beta.2', '>=1.2.0'), true);
  assert.equal(satisfies('1.2.0-rc.1', '1.2.0'), false);
  assert.ok(compareVersions('1.2.0', '1.2.0-rc.1') > 0);
  assert.ok(compareVersions('1.2.0-rc.2', '1.2.0-rc.1') > 0);
  assert.ok(compareVersions('1.10.0', '1.9.9') > 0);
  assert.ok(Number.isNaN(compareVersions('1.2', '1.2.0')));
});
