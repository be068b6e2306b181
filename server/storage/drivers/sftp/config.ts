/**
 * The sftp driver's configuration: alias resolution, checks, and the one
 * piece of local I/O done at init (reading `key_path`).
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, posix } from 'node:path';
import { AppError } from '../../../errors';
import { parsePin, type HostKeyPolicy } from './host-keys';

export interface SftpConfig {
  host: string;
  port: number;
  user: string;
  password?: string;
  privateKey?: string;
  /** Normalised remote folder the storage maps to (absolute, or relative to the login folder). */
  root: string;
  hostKeys: HostKeyPolicy;
  /** Bound on every request; a stalled transfer fails after this much silence. */
  timeoutMs: number;
  /** Bound on connecting: handshake, authentication and the SFTP channel. */
  connectTimeoutMs: number;
}

export const DEFAULT_PORT = 22;
/** Longest name OpenSSH on a Linux filesystem accepts, in bytes. */
export const MAX_NAME_BYTES = 255;
export const DEFAULT_TIMEOUT_S = 30;
/** Connecting never takes longer than the manager's 10 s probe, so a probe reports our reason, not its own timeout. */
const MAX_CONNECT_TIMEOUT_MS = 9_000;

/** Older spellings still read, newest first per key. */
export const ALIASES: Record<string, string[]> = { user: ['username'], root: ['base_path', 'remote_path'] };

type Problem = { field: string; message: string };

const pick = (raw: Record<string, unknown>, key: string): unknown => {
  for (const k of [key, ...(ALIASES[key] ?? [])]) {
    const v = raw[k];
    if (v !== undefined && v !== null && v !== '') return v;
  }
  return undefined;
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : undefined);
const bool = (v: unknown): boolean => v === true || v === 1 || (typeof v === 'string' && ['true', '1', 'yes', 'on'].includes(v.toLowerCase()));
const int = (v: unknown, dflt: number): number => (v === undefined ? dflt : typeof v === 'number' ? v : /^\d+$/.test(String(v).trim()) ? Number(v) : NaN);
const expandHome = (p: string): string => (p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p);

/** The root without trailing slashes; null when it is the filesystem root, empty, or climbs with `..`. */
export function normaliseRoot(root: string): string | null {
  if (root.includes('\0') || root.split('/').includes('..')) return null;
  const n = posix.normalize(root).replace(/\/+$/, '');
  return n === '' || n === '.' || n === '/' ? null : n;
}

/** Problems with the config beyond the descriptor's required flags; empty when valid. */
export function configProblems(raw: Record<string, unknown>): Problem[] {
  const out: Problem[] = [];
  if (!str(pick(raw, 'host'))) out.push({ field: 'host', message: 'host is required' });
  if (!str(pick(raw, 'user'))) out.push({ field: 'user', message: 'user is required' });
  if (!str(raw.password) && !str(raw.private_key) && !str(raw.key_path))
    out.push({ field: 'password', message: 'one of password, private_key or key_path is required' });
  const port = int(pick(raw, 'port'), DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65535) out.push({ field: 'port', message: 'port must be an integer from 1 to 65535' });
  const timeout = int(pick(raw, 'timeout'), DEFAULT_TIMEOUT_S);
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 600) out.push({ field: 'timeout', message: 'timeout must be 1 to 600 seconds' });
  const root = str(pick(raw, 'root'));
  if (root === undefined || normaliseRoot(root) === null)
    out.push({ field: 'root', message: 'root must be a sub-folder, never "/", and must not contain ".."' });
  const pin = str(raw.host_key);
  if (pin !== undefined && parsePin(pin) === null)
    out.push({ field: 'host_key', message: 'host_key must be a SHA256:... fingerprint or a public key line such as "ssh-ed25519 AAAA..."' });
  return out;
}

/**
 * Resolves aliases and defaults, reads `key_path` when `private_key` is empty,
 * and picks the host-key policy: a pin, then a strict known_hosts file, then
 * the explicit opt-out, else trust-on-first-use in `<stateDir>/known_hosts`.
 * Throws `validation_failed` on the first problem.
 */
export async function resolveConfig(raw: Record<string, unknown>, stateDir: string): Promise<SftpConfig> {
  const [problem] = configProblems(raw);
  if (problem) throw new AppError('validation_failed', { field: problem.field, reason: problem.message }, { field: problem.field, reason: problem.message });
  let privateKey = str(raw.private_key);
  const keyPath = str(raw.key_path);
  if (!privateKey && keyPath) {
    try {
      privateKey = await readFile(expandHome(keyPath), 'utf8');
    } catch (e) {
      const reason = `cannot read key_path ${keyPath}: ${(e as Error).message}`;
      throw new AppError('validation_failed', { field: 'key_path', reason }, { field: 'key_path', reason });
    }
  }
  const pin = str(raw.host_key);
  const knownHosts = str(raw.known_hosts);
  const hostKeys: HostKeyPolicy = pin
    ? { mode: 'pinned', ...parsePin(pin)! }
    : knownHosts
      ? { mode: 'strict', file: expandHome(knownHosts) }
      : bool(raw.insecure_skip_host_key)
        ? { mode: 'insecure' }
        : { mode: 'tofu', file: join(stateDir, 'known_hosts') };
  const timeoutMs = int(pick(raw, 'timeout'), DEFAULT_TIMEOUT_S) * 1000;
  return {
    host: str(pick(raw, 'host'))!,
    port: int(pick(raw, 'port'), DEFAULT_PORT),
    user: str(pick(raw, 'user'))!,
    password: typeof raw.password === 'string' && raw.password !== '' ? raw.password : undefined,
    privateKey,
    root: normaliseRoot(str(pick(raw, 'root'))!)!,
    hostKeys,
    timeoutMs,
    connectTimeoutMs: Math.min(timeoutMs, MAX_CONNECT_TIMEOUT_MS),
  };
}
