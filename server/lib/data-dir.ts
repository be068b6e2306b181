/**
 * The data folder: its layout, the single-instance lock and the per-install
 * secret key (created once, mode 0600).
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export interface DataDirLayout {
  root: string;
  db: string;
  secretKey: string;
  lock: string;
  thumbs: string;
  /** PDF renditions of office documents (read-only previews). */
  pdf: string;
  zips: string;
  staging: string;
  logs: string;
  state: string;
  plugins: string;
}

export function layout(root: string): DataDirLayout {
  return {
    root,
    db: join(root, 'filedock.sqlite'),
    secretKey: join(root, 'secret.key'),
    lock: join(root, 'filedock.lock'),
    thumbs: join(root, 'cache', 'thumbs'),
    pdf: join(root, 'cache', 'pdf'),
    zips: join(root, 'cache', 'zips'),
    staging: join(root, 'staging'),
    logs: join(root, 'logs'),
    state: join(root, 'state'),
    plugins: join(root, 'plugins'),
  };
}

export function ensureDirs(l: DataDirLayout): void {
  mkdirSync(l.root, { recursive: true, mode: 0o700 });
  for (const d of [l.thumbs, l.zips, l.staging, l.logs, l.state, l.plugins]) mkdirSync(d, { recursive: true });
}

export class LockedError extends Error {
  constructor(readonly pid: number, readonly dir: string) {
    super(`another Filedock (pid ${pid}) is already running on the data folder ${dir}; stop it first or use another SERVICE_DATA_DIR`);
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Takes the data folder's lock (a stale lock of a dead process is taken over). Returns the release function. */
export function acquireLock(l: DataDirLayout): () => void {
  for (let i = 0; i < 2; i++) {
    try {
      const fd = openSync(l.lock, 'wx', 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(l.lock, 'utf8') === String(process.pid)) rmSync(l.lock);
        } catch {
          /* already gone */
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSync(l.lock, 'utf8').trim());
      if (pid && pid !== process.pid && alive(pid)) throw new LockedError(pid, l.root);
      rmSync(l.lock, { force: true });
    }
  }
  throw new Error(`cannot take the lock ${l.lock}`);
}

/** The 32-byte install secret, created on first use with mode 0600. */
export function loadSecretKey(l: DataDirLayout): Buffer {
  if (!existsSync(l.secretKey)) {
    writeFileSync(l.secretKey, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(l.secretKey, 0o600);
  const key = Buffer.from(readFileSync(l.secretKey, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${l.secretKey} is not a valid secret key`);
  return key;
}
