/**
 * Writing a file larger than one host message (docs/app-plugins.md, "Host API"):
 * `files.write` carries at most 700 KiB, so an app sends a bigger file in parts.
 * Each part is a `files.write` with `more: true`: its bytes are appended to a
 * staging file the host owns (in the OS temp folder; nothing is visible in the
 * storage yet). The next `files.write` of that path without `more` adds its
 * bytes and commits the whole file through the write gate as ONE write (one
 * version, one announcement, one output of the job), with that call's
 * `overwrite`, holding the app's own lock on the file like a plain write.
 * A write without `more` to a path with nothing staged is the plain write,
 * unchanged.
 *
 * Staging belongs to the host API built for one call (a job's whole run, or
 * one view/event call): another call cannot add to it. A staging left behind
 * (the app stopped sending, the job was cancelled) is deleted after 10 idle
 * minutes, when the job's signal aborts, or when the process exits.
 */
import { createReadStream, rmSync } from 'node:fs';
import { appendFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../errors';
import type { FileService } from '../../files';
import { uiPath } from '../../lib/paths';
import type { InstalledApp } from '../registry/apps.repo';
import type { JobScope } from './host-api';

export const STAGED_LIMITS = {
  /** One part's bytes: the same as one plain write. */
  part_bytes: 700 * 1024,
  /** One staged file's bytes in all. */
  file_bytes: 256 * 1024 * 1024,
  /** Files staged at once by one call's host. */
  files: 4,
  idle_ms: 10 * 60 * 1000,
};

type HostFn = (args: unknown) => unknown;
type Face = ReturnType<FileService['forActor']>;

interface Staging {
  dir: string;
  file: string;
  size: number;
  chain: Promise<unknown>;
  timer: NodeJS.Timeout;
}

/** Staging folders alive now: removed at exit too, so a stopped service leaves none behind. */
const live = new Set<string>();
let exitHook = false;
const track = (dir: string) => {
  live.add(dir);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => live.forEach((d) => rmSync(d, { recursive: true, force: true })));
};

const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** `files.write` with parts: wraps the plain write (`write`) of one call's host API. */
/**
 * `hold(path)` is the caller's face holding this app's own lock on that file when it has one, as for a
 * plain write: the commit passes the app's lock, anyone else's still answers 423.
 */
export function withStagedWrites(write: HostFn, s: { hold: (path: string) => Promise<Face>; app: InstalledApp; job?: JobScope }): HostFn {
  const staged = new Map<string, Staging>();
  const refuse = (reason: string) => new AppError('app_host_refused', { plugin: s.app.id, reason }, { reason });
  const drop = async (p: string) => {
    const st = staged.get(p);
    if (!st) return;
    staged.delete(p);
    clearTimeout(st.timer);
    live.delete(st.dir);
    await rm(st.dir, { recursive: true, force: true }).catch(() => undefined);
  };
  s.job?.signal.addEventListener('abort', () => [...staged.keys()].forEach((p) => void drop(p)), { once: true });
  const idle = (p: string) => {
    const t = setTimeout(() => void drop(p), STAGED_LIMITS.idle_ms);
    t.unref();
    return t;
  };

  return async (a) => {
    const o = obj(a);
    const p = typeof o.path === 'string' ? o.path : '';
    const more = o.more === true;
    const st = staged.get(p);
    if (!more && !st) return write(a);
    if (!s.app.manifest.permissions.includes('files.write')) throw refuse('the app did not declare the files.write permission');
    if (!p.startsWith('/')) throw refuse('path must be a path such as /storage/folder/file');
    if (typeof o.data !== 'string') throw refuse('data must be a string (utf8 text, or base64 with encoding: "base64")');
    const bytes = Buffer.from(o.data, o.encoding === 'base64' ? 'base64' : 'utf8');
    if (bytes.length > STAGED_LIMITS.part_bytes) throw refuse(`one write holds at most ${STAGED_LIMITS.part_bytes} bytes`);
    let cur = st;
    if (!cur) {
      if (staged.size >= STAGED_LIMITS.files) throw refuse(`at most ${STAGED_LIMITS.files} files are written in parts at once`);
      (await s.hold(p)).target(p, 'editor'); // the caller must be able to write there: refused at the first part, not after all of them
      const dir = await mkdtemp(join(tmpdir(), 'filedock-app-part-'));
      track(dir);
      cur = { dir, file: join(dir, 'data'), size: 0, chain: Promise.resolve(), timer: idle(p) };
      staged.set(p, cur);
    }
    const c = cur;
    // Parts sent without waiting for each other are still added in the order they were called.
    const step = c.chain.then(async () => {
      if (staged.get(p) !== c) throw refuse("this file's parts were dropped (idle too long or cancelled); start again");
      if (c.size + bytes.length > STAGED_LIMITS.file_bytes) {
        await drop(p);
        throw refuse(`a file written in parts holds at most ${STAGED_LIMITS.file_bytes} bytes`);
      }
      await appendFile(c.file, bytes);
      c.size += bytes.length;
      clearTimeout(c.timer);
      c.timer = idle(p);
      if (more) return { path: p, staged: c.size };
      try {
        const size = (await stat(c.file)).size;
        const node = await (await s.hold(p)).write(p, createReadStream(c.file), {
          size,
          origin: 'app',
          overwrite: o.overwrite === true,
          signal: s.job?.signal,
          audit: 'file.upload',
          meta: { plugin: s.app.id },
        });
        const written = uiPath(node.storageName, node.path);
        s.job?.outputs.push(written);
        return { path: written, size };
      } finally {
        await drop(p);
      }
    });
    c.chain = step.catch(() => undefined);
    return step;
  };
}
