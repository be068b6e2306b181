/**
 * Desktop pairing (docs/server-host-protocol.md, docs/desktop.md): on first
 * run the shell trades its one-time bootstrap secret for an owner session and
 * mints a device key bound to this machine; every later launch trades that key
 * for a session, so the window opens signed in without a password. The key is
 * revocable from the server; a revoked key is forgotten and the window falls
 * back to the normal sign-in page, after which `pairWithSession` pairs again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface LoginResult {
  user: { id: number | string; email: string; username: string; role: string };
  token: string;
  expires_at: string;
}

export interface DeviceKey {
  key_id: number | string;
  key: string;
}

/** A failed pairing call: `status` is the HTTP status (0 when the server was unreachable), `code` the spec's error code. */
export class PairingError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(baseUrl: string, path: string, body: unknown, token?: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(new URL(path, baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    throw new PairingError(0, 'unreachable', `server unreachable: ${(e as Error).message}`);
  }
  const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new PairingError(res.status, String(data.error ?? 'internal'), String(data.message ?? res.statusText));
  return data as T;
}

/** First run: the one-time secret signs the owner in. Fails with 401 once the secret was used. */
export const bootstrap = (baseUrl: string, secret: string) => call<LoginResult>(baseUrl, '/api/auth/desktop/bootstrap', { secret });

/** Mints a device key for this machine under the session `token`. */
export const completePairing = (baseUrl: string, token: string, machineId: string, label: string) =>
  call<DeviceKey>(baseUrl, '/api/auth/desktop/complete', { machine_id: machineId, label }, token);

/** Every launch: the device key signs its user in. 401 when the key was revoked or belongs to another machine. */
export const keyLogin = (baseUrl: string, key: string, machineId: string) =>
  call<LoginResult>(baseUrl, '/api/auth/desktop/login', { key, machine_id: machineId });

/** How the key file is sealed at rest (Electron's safeStorage in the app; identity in tests). */
export interface Sealer {
  seal(plain: string): Buffer;
  unseal(sealed: Buffer): string;
}
export const plainSealer: Sealer = { seal: (s) => Buffer.from(s, 'utf8'), unseal: (b) => b.toString('utf8') };

/** The device key on disk (0600, sealed). `load` gives null for a missing or unreadable file. */
export class DeviceKeyStore {
  constructor(
    readonly path: string,
    private readonly sealer: Sealer = plainSealer,
  ) {}

  load(): DeviceKey | null {
    if (!existsSync(this.path)) return null;
    try {
      const k = JSON.parse(this.sealer.unseal(readFileSync(this.path))) as DeviceKey;
      return typeof k.key === 'string' ? k : null;
    } catch {
      return null;
    }
  }

  save(k: DeviceKey): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, this.sealer.seal(JSON.stringify(k)), { mode: 0o600 });
    renameSync(tmp, this.path);
  }

  /** Forgets the key (revoked, or the user signed out of this machine). Idempotent. */
  clear(): void {
    rmSync(this.path, { force: true });
  }
}

/**
 * A stable id for this machine and app install: a hash of the OS machine id
 * (Linux `/etc/machine-id`) when readable, else of a random id kept in
 * `fallbackPath`. Hashed so the raw OS id never leaves the machine.
 */
export function machineId(fallbackPath: string, osIdPath = '/etc/machine-id'): string {
  let source = '';
  try {
    source = readFileSync(osIdPath, 'utf8').trim();
  } catch {
    // Not Linux, or unreadable: use our own persisted id.
  }
  if (!source) {
    if (existsSync(fallbackPath)) source = readFileSync(fallbackPath, 'utf8').trim();
    if (!source) {
      source = randomBytes(16).toString('hex');
      mkdirSync(dirname(fallbackPath), { recursive: true });
      writeFileSync(fallbackPath, source, { mode: 0o600 });
    }
  }
  return createHash('sha256').update(`filedock-desktop\n${source}`).digest('hex').slice(0, 32);
}

export interface SignInOptions {
  baseUrl: string;
  machineId: string;
  /** Shown in the server's list of paired devices. */
  label: string;
  keys: DeviceKeyStore;
  /** The first-run secret the server was started with; null after the first run. */
  bootstrapSecret: string | null;
}

export type SignInOutcome = { via: 'key' | 'bootstrap'; login: LoginResult } | { via: 'none'; reason: string };

/**
 * Signs the window in without a password: with the stored device key, else
 * (first run) with the bootstrap secret, pairing this machine on the way.
 * A rejected key is cleared. Resolves `{via: 'none'}` when neither works, so
 * the window shows the sign-in page; rejects only when the server is unreachable.
 */
export async function signIn(o: SignInOptions): Promise<SignInOutcome> {
  const stored = o.keys.load();
  if (stored) {
    try {
      return { via: 'key', login: await keyLogin(o.baseUrl, stored.key, o.machineId) };
    } catch (e) {
      if (!(e instanceof PairingError) || e.status !== 401) throw e;
      o.keys.clear();
    }
  }
  if (!o.bootstrapSecret) return { via: 'none', reason: stored ? 'the device key was revoked' : 'this machine is not paired' };
  let login: LoginResult;
  try {
    login = await bootstrap(o.baseUrl, o.bootstrapSecret);
  } catch (e) {
    if (e instanceof PairingError && e.status === 401) return { via: 'none', reason: 'the first-run secret was already used' };
    throw e;
  }
  o.keys.save(await completePairing(o.baseUrl, login.token, o.machineId, o.label));
  return { via: 'bootstrap', login };
}

/** Pairs this machine with a session the user opened by signing in with a password (after a revoke). */
export async function pairWithSession(baseUrl: string, token: string, o: Pick<SignInOptions, 'machineId' | 'label' | 'keys'>): Promise<void> {
  o.keys.save(await completePairing(baseUrl, token, o.machineId, o.label));
}
