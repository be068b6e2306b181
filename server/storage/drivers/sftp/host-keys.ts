/**
 * Host-key checking for SFTP sessions, in the four modes the spec names:
 * a pinned key, a strict known_hosts file, trust-on-first-use recorded in the
 * service's own known_hosts file, or (explicitly) no checking at all. The
 * verifier is synchronous so a first-use record is read and appended in one
 * step that concurrent connections of this process cannot interleave.
 */
import { createHash, createHmac } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ServerHostKeyAlgorithm } from 'ssh2';

export type HostKeyPolicy =
  | { mode: 'insecure' }
  | { mode: 'pinned'; fingerprint: string; keyType?: string }
  | { mode: 'strict'; file: string }
  | { mode: 'tofu'; file: string };

/** Checks one connection's host key; `refusal` says why the last key was turned down. */
export interface HostKeyVerifier {
  /** True when the server's raw public key blob is acceptable under the policy. */
  verify(blob: Buffer): boolean;
  /** The English reason of the last refusal, or null. */
  refusal(): string | null;
}

/** OpenSSH's fingerprint of a raw public key blob: `SHA256:` + unpadded base64. */
export const fingerprintOf = (blob: Buffer): string => 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');

/** The key type embedded at the start of a public key blob (`ssh-ed25519`, `ecdsa-sha2-nistp256`, ...). */
export function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  return len > 0 && len < 64 && blob.length >= 4 + len ? blob.toString('latin1', 4, 4 + len) : 'unknown';
}

/** A blob is only a key when its base64 decodes and its embedded type matches the written one. */
function blobOf(type: string, base64: string): Buffer | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return null;
  const blob = Buffer.from(base64, 'base64');
  return keyTypeOf(blob) === type ? blob : null;
}

/**
 * Parses a `host_key` pin: a `SHA256:<base64>` fingerprint, or a public key
 * line (`ssh-ed25519 AAAA... [comment]`, optionally preceded by a host field as
 * in known_hosts; then the key type is known too). Null when unreadable.
 */
export function parsePin(text: string): { fingerprint: string; keyType?: string } | null {
  const t = text.trim();
  const fp = /^SHA256:([A-Za-z0-9+/]{43})=?$/.exec(t);
  if (fp) return { fingerprint: `SHA256:${fp[1]}` };
  const words = t.split(/\s+/);
  for (let i = 0; i + 1 < words.length; i++) {
    const blob = blobOf(words[i], words[i + 1]);
    if (blob) return { fingerprint: fingerprintOf(blob), keyType: words[i] };
  }
  return null;
}

/** ssh2's host-key algorithms in its default order of preference. */
const HOST_KEY_ALGORITHMS: ServerHostKeyAlgorithm[] = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];
const algorithmsOf = (keyType: string): string[] => (keyType === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [keyType]);

/**
 * The host-key algorithms to offer, the types already known for the host
 * first, as OpenSSH does: a server with both an RSA and an ed25519 key must
 * show the one we know, not the one we happen to prefer. Undefined keeps
 * ssh2's default order.
 */
export function hostKeyAlgorithms(policy: HostKeyPolicy, host: string, port: number): ServerHostKeyAlgorithm[] | undefined {
  let types: string[] = [];
  if (policy.mode === 'pinned') types = policy.keyType ? [policy.keyType] : [];
  else if (policy.mode !== 'insecure') {
    try {
      types = knownKeysFor(readIfExists(policy.file) ?? '', knownHostsName(host, port))
        .filter((k) => !k.revoked)
        .map((k) => k.type);
    } catch {
      // The verifier reports an unreadable file with its own reason.
    }
  }
  const known = new Set(types.flatMap(algorithmsOf));
  const first = HOST_KEY_ALGORITHMS.filter((a) => known.has(a));
  return first.length === 0 ? undefined : [...first, ...HOST_KEY_ALGORITHMS.filter((a) => !first.includes(a))];
}

/** The name known_hosts uses for a host: bare on port 22, `[host]:port` otherwise. */
export const knownHostsName = (host: string, port: number): string => (port === 22 ? host : `[${host}]:${port}`);

/** OpenSSH host patterns: `*` and `?` wildcards. */
const globMatches = (pattern: string, name: string): boolean =>
  new RegExp(
    '^' +
      pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.') +
      '$',
    'i',
  ).test(name);

/** Whether a known_hosts host field (comma list, negations, or one hashed `|1|salt|hash`) names `name`. */
function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith('|1|')) {
    const [, , salt, hash] = field.split('|');
    if (!salt || !hash) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
  }
  let matched = false;
  for (const pattern of field.split(',')) {
    if (pattern.startsWith('!')) {
      if (globMatches(pattern.slice(1), name)) return false;
    } else if (globMatches(pattern, name)) matched = true;
  }
  return matched;
}

interface KnownKey {
  revoked: boolean;
  type: string;
  fingerprint: string;
}

/** Keys a known_hosts text holds for `name`; `@cert-authority` lines are not host keys and are left out. */
function knownKeysFor(text: string, name: string): KnownKey[] {
  const out: KnownKey[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const words = line.split(/\s+/);
    const marker = words[0].startsWith('@') ? words.shift() : undefined;
    if (marker === '@cert-authority' || words.length < 3) continue;
    if (!hostFieldMatches(words[0], name)) continue;
    const blob = blobOf(words[1], words[2]);
    if (blob) out.push({ revoked: marker === '@revoked', type: words[1], fingerprint: fingerprintOf(blob) });
  }
  return out;
}

const readIfExists = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
};

/** A verifier for one connection to `host:port` under `policy`. */
export function hostKeyVerifier(policy: HostKeyPolicy, host: string, port: number): HostKeyVerifier {
  const name = knownHostsName(host, port);
  let refusal: string | null = null;
  const refuse = (reason: string): false => {
    refusal = reason;
    return false;
  };

  const check = (blob: Buffer): boolean => {
    const offered = fingerprintOf(blob);
    const type = keyTypeOf(blob);
    switch (policy.mode) {
      case 'insecure':
        return true;
      case 'pinned':
        return (
          offered === policy.fingerprint ||
          refuse(`host key mismatch for ${name}: the server offered ${type} ${offered} but the pinned key is ${policy.fingerprint}`)
        );
      case 'strict': {
        let text: string | null;
        try {
          text = readIfExists(policy.file);
        } catch (e) {
          return refuse(`cannot read known_hosts file ${policy.file}: ${(e as Error).message}`);
        }
        if (text === null) return refuse(`known_hosts file ${policy.file} does not exist (strict host key checking)`);
        return (
          judge(knownKeysFor(text, name), offered, type, `known_hosts file ${policy.file}`) ??
          refuse(`host ${name} is not in known_hosts file ${policy.file} (strict host key checking); the server offered ${type} ${offered}`)
        );
      }
      case 'tofu': {
        const text = readIfExists(policy.file) ?? '';
        const verdict = judge(knownKeysFor(text, name), offered, type, `the key recorded on first use in ${policy.file}`);
        if (verdict !== null) return verdict;
        mkdirSync(dirname(policy.file), { recursive: true, mode: 0o700 });
        const sep = text === '' || text.endsWith('\n') ? '' : '\n';
        appendFileSync(policy.file, `${sep}${name} ${type} ${blob.toString('base64')}\n`, { mode: 0o600 });
        return true;
      }
    }
  };

  /** true/false when the file has a say about `name`, null when it has no entry for it. */
  const judge = (known: KnownKey[], offered: string, type: string, source: string): boolean | null => {
    if (known.some((k) => k.revoked && k.fingerprint === offered)) return refuse(`host key ${type} ${offered} of ${name} is marked @revoked in ${source}`);
    const valid = known.filter((k) => !k.revoked);
    if (valid.length === 0) return null;
    if (valid.some((k) => k.fingerprint === offered)) return true;
    return refuse(
      `host key mismatch for ${name}: the server now offers ${type} ${offered}, which differs from ${source}` +
        ` (${valid.map((k) => k.fingerprint).join(', ')}); if the change is expected, remove the old line for ${name} from that file`,
    );
  };

  return {
    verify(blob: Buffer) {
      refusal = null;
      try {
        return check(blob);
      } catch (e) {
        return refuse(`host key check failed: ${(e as Error).message}`);
      }
    },
    refusal: () => refusal,
  };
}
