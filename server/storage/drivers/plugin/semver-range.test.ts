import { test } from 'node:test';
import assert from 'node:assert/strict';
import { satisfies } from './semver-range';

test('comparator sets, caret, tilde, wildcards and alternatives', () => {
  const cases: Array<[string, string, boolean]> = [
    ['0.1.0', '>=0.1.0 <1.0.0', true],
    ['1.0.0', '>=0.1.0 <1.0.0', false],
    ['0.3.9', '^0.3.1', true],
    ['0.4.0', '^0.3.1', false],
    ['1.9.0', '^1.2.3', true],
    ['2.0.0', '^1.2.3', false],
    ['1.4.7', '~1.4', true],
    ['1.5.0', '~1.4', false],
    ['0.1.0', '0.x', true],
    ['1.0.0', '0.x', false],
    ['3.1.4', '*', true],
    ['0.1.0', '9.0.0 || >= 0.1.0 < 0.2', true],
    ['0.1.0', '0.1.0', true],
    ['0.1.1', '0.1.0', false],
    ['1.2.9', '<=1.2', true],
    ['1.3.0', '<=1.2', false],
    ['0.1.0', 'banana', false],
    ['0.1.0', '', false],
  ];
  for (const [v, r, want] of cases) assert.equal(satisfies(v, r), want, `${v} in ${r}`);
});
