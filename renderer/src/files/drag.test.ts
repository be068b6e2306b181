import { test } from 'node:test';
import assert from 'node:assert/strict';
import { droppedPaths, startRowDrag, ROWS_MIME } from './drag';

/** The part of DataTransfer the helpers use. */
function transfer(): DataTransfer {
  const data = new Map<string, string>();
  return {
    setData: (k: string, v: string) => void data.set(k, v),
    getData: (k: string) => data.get(k) ?? '',
    effectAllowed: 'none',
  } as unknown as DataTransfer;
}

test('row drags carry their paths under our own type; foreign drops carry none', () => {
  const dt = transfer();
  startRowDrag(dt, ['/home/a.txt', '/home/b']);
  assert.deepEqual(droppedPaths(dt), ['/home/a.txt', '/home/b']);
  assert.equal(dt.effectAllowed, 'move');
  const other = transfer();
  other.setData(ROWS_MIME, 'not json');
  assert.deepEqual(droppedPaths(other), []);
  assert.deepEqual(droppedPaths(transfer()), []);
});
