import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplicaRule } from '../../../server/contract';
import { reorder } from './rule-order';

const rule = (id: number, priority: number) => ({ id, priority }) as ReplicaRule;

test('moving a rule renumbers 10, 20, 30… and patches only the rows whose priority changed', () => {
  const rules = [rule(1, 10), rule(2, 20), rule(3, 30)];
  assert.deepEqual(reorder(rules, 2, 0), [
    { id: 3, priority: 10 },
    { id: 1, priority: 20 },
    { id: 2, priority: 30 },
  ]);
  assert.deepEqual(reorder(rules, 0, 1), [
    { id: 2, priority: 10 },
    { id: 1, priority: 20 },
  ]);
  assert.deepEqual(reorder(rules, 1, 1), [], 'no move, nothing to save');
});

test('uneven priorities (made by hand or by the API) become even steps', () => {
  assert.deepEqual(reorder([rule(7, -5), rule(8, 3)], 1, 0), [
    { id: 8, priority: 10 },
    { id: 7, priority: 20 },
  ]);
});
