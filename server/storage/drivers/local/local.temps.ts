/**
 * Leftovers of a killed process. The driver's temp files (`.~fd-*`: atomic
 * writes, staged copies, a target renamed aside) sit next to their targets,
 * because only a rename in the same folder is atomic, so a crash can leave
 * them anywhere in the tree. Each folder that receives one is noted once per
 * process in a journal in the storage's state folder; the next server start
 * sweeps the journaled folders of temp entries older than that start (work of
 * this process is always newer), so nothing walks the whole tree for it.
 * The storage's root folder is swept once too (marked done in the state
 * folder): installs from before the journal left their leftovers there.
 */
import { appendFileSync, existsSync, mkdirSync, promises as fsp, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TEMP_PREFIX } from '../../../lib/paths';

/** Folders noted in this process before the set starts over (a note again only costs a journal line). */
const NOTED_MAX = 100_000;
/** Journals already swept in this process: a driver rebuilt by a storage save must not sweep again. */
const swept = new Set<string>();

export class TempJournal {
  private noted = new Set<string>();

  constructor(private readonly file: string) {}

  /** Notes `dir` before a temp file is created in it. Synchronous and once per folder: it must be on disk first. */
  note(dir: string): void {
    if (this.noted.has(dir)) return;
    if (this.noted.size >= NOTED_MAX) this.noted.clear();
    mkdirSync(dirname(this.file), { recursive: true });
    appendFileSync(this.file, dir + '\n');
    this.noted.add(dir);
  }

  /**
   * Once per process: takes the journal over (new notes go to a fresh one) and
   * removes, in the background, temp entries older than `before` from every
   * folder it names, and from `root` the first time. A sweep a crash cut
   * short is taken up again with the new notes. Resolves with how many it
   * removed.
   */
  sweepOnce(before: number, root: string): Promise<number> {
    if (swept.has(this.file)) return Promise.resolve(0);
    swept.add(this.file);
    const taken = `${this.file}.sweep`;
    const rootDone = `${this.file}.root-swept`;
    try {
      if (!existsSync(rootDone)) {
        mkdirSync(dirname(this.file), { recursive: true });
        appendFileSync(taken, root + '\n');
        writeFileSync(rootDone, '');
      }
      if (existsSync(taken)) {
        if (existsSync(this.file)) {
          appendFileSync(taken, readFileSync(this.file));
          rmSync(this.file);
        }
      } else renameSync(this.file, taken);
    } catch {
      // nothing journaled
    }
    return existsSync(taken) ? sweep(taken, before) : Promise.resolve(0);
  }
}

async function sweep(journal: string, before: number): Promise<number> {
  const dirs = new Set((await fsp.readFile(journal, 'utf8')).split('\n').filter(Boolean));
  let removed = 0;
  for (const dir of dirs) {
    const names = await fsp.readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(TEMP_PREFIX)) continue;
      const abs = join(dir, name);
      const st = await fsp.lstat(abs).catch(() => null);
      if (!st || st.mtimeMs >= before) continue;
      await fsp.rm(abs, { recursive: true, force: true });
      removed++;
    }
  }
  await fsp.rm(journal, { force: true });
  return removed;
}
