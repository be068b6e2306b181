import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../../test/helpers/tools';
import { TempJournal } from './local.temps';

/** A temp file (or folder) of a killed process, dated well before the sweep's start. */
function leftover(path: string, folder = false): void {
  if (folder) {
    mkdirSync(path);
    writeFileSync(join(path, 'part'), 'x');
  } else writeFileSync(path, '');
  const old = new Date(Date.now() - 3_600_000);
  utimesSync(path, old, old);
}

test('a start sweeps journaled folders and, once, the root; a sweep cut short is taken up again; newer and ordinary files stay', async () => {
  const t = tempDir('filedock-temps-');
  const root = join(t.dir, 'root');
  const deep = join(root, 'a/b');
  mkdirSync(deep, { recursive: true });
  const journal = join(t.dir, 'state/temp-dirs');
  leftover(join(root, '.~fd-old-from-round-one')); // never journaled: only the one-time root sweep finds it
  leftover(join(root, '.~fd-staged-copy'), true);
  leftover(join(deep, '.~fd-write'));
  writeFileSync(join(deep, 'keep.txt'), 'mine');
  new TempJournal(journal).note(deep);
  // A previous sweep was cut short: its taken-over journal names a folder the new journal does not.
  const other = join(root, 'other');
  mkdirSync(other);
  leftover(join(other, '.~fd-x'));
  writeFileSync(`${journal}.sweep`, other + '\n');
  const start = Date.now();
  writeFileSync(join(deep, '.~fd-this-process'), ''); // newer than the start: work in progress
  utimesSync(join(deep, '.~fd-this-process'), new Date(start + 1000), new Date(start + 1000));

  const removed = await new TempJournal(journal).sweepOnce(start, root);
  assert.equal(removed, 4);
  for (const gone of ['.~fd-old-from-round-one', '.~fd-staged-copy', 'a/b/.~fd-write', 'other/.~fd-x']) assert.equal(existsSync(join(root, gone)), false, gone);
  for (const kept of ['a/b/keep.txt', 'a/b/.~fd-this-process']) assert.equal(existsSync(join(root, kept)), true, kept);
  assert.equal(existsSync(`${journal}.sweep`), false, 'the taken journal is gone once swept');
  assert.equal(await new TempJournal(journal).sweepOnce(start, root), 0, 'once per process');
  t.cleanup();
});
