/**
 * The data folder: its layout, the single-instance lock and the per-install
 * secret key (created once, mode 0600).
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createHmac, randomBytes } from 'node:crypto';
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
  constructor(
    readonly pid: number,
    readonly dir: string,
  ) {
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

/**
 * The 32-byte install secret: from `file` (SERVICE_SECRET_KEY_FILE, shared by every instance on one database;
 * never created here: instances racing to create it would each get their own), else the data folder's
 * `secret.key`, created on first use with mode 0600.
 */
export function loadSecretKey(l: DataDirLayout, file = ''): Buffer {
  if (file) {
    if (!existsSync(file))
      throw new SecretKeyError(
        `the secret key file ${file} (SERVICE_SECRET_KEY_FILE) does not exist: create it once with "head -c 32 /dev/urandom | base64 > ${file}" and give every instance the same file`,
      );
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new SecretKeyError(`${file} (SERVICE_SECRET_KEY_FILE) is not a valid secret key: expected 32 bytes in base64`);
    return key;
  }
  if (!existsSync(l.secretKey)) {
    writeFileSync(l.secretKey, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(l.secretKey, 0o600);
  const key = Buffer.from(readFileSync(l.secretKey, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${l.secretKey} is not a valid secret key`);
  return key;
}

/** The secret key is missing, malformed, or not the one the database was set up with (the CLI exits 2). */
export class SecretKeyError extends Error {}

/** A fingerprint of the key (an HMAC of a constant): safe to store, tells keys apart, reveals nothing of the key. */
export function secretKeyFingerprint(key: Buffer): string {
  return createHmac('sha256', key).update('filedock secret key check v1').digest('hex');
}

/**
 * Compares the key with the fingerprint the database keeps (`stored`; recorded by the first instance). Throws
 * SecretKeyError when they differ: an instance with another key would write credentials and signatures the
 * others cannot read.
 */
export function checkSecretKey(key: Buffer, stored: string | undefined, source: string): void {
  const mine = secretKeyFingerprint(key);
  if (stored === undefined || stored === mine) return;
  throw new SecretKeyError(
    `the secret key (${source}) does not match the one this database was set up with (fingerprint ${stored.slice(0, 12)}…, this key ${mine.slice(0, 12)}…): ` +
      "every instance on one database needs the same key; give this instance the first one's key file with SERVICE_SECRET_KEY_FILE",
  );
}
