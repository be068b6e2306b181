import { test } from 'node:test';
import assert from 'node:assert/strict';
import { namedToPositional, toPositional } from './params';

test('? placeholders become $n outside quotes and comments', () => {
  assert.equal(toPositional(`SELECT ?, '?', "a?", ? -- why?\n, ?`), `SELECT $1, '?', "a?", $2 -- why?\n, $3`);
  assert.equal(toPositional(`SELECT 'it''s ?', ?`), `SELECT 'it''s ?', $1`);
});

test('@name parameters become ? in order, names kept; quoted text is left alone', () => {
  assert.deepEqual(namedToPositional(`UPDATE t SET a = @a, b = '@b' WHERE id = @id AND x = @a`), {
    sql: `UPDATE t SET a = ?, b = '@b' WHERE id = ? AND x = ?`,
    names: ['a', 'id', 'a'],
  });
  assert.equal(namedToPositional('SELECT 1'), null);
});
