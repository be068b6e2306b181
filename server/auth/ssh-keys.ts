/**
 * SSH public keys registered per account (`ssh_keys`, owned here) and the
 * public-key sign-in of the SFTP gateway. A key signs in as its account, with
 * the account's permissions, like its password would (an account with a
 * second factor may use keys: a private key is a factor of its own). The
 * gateway checks the client's signature; this module only says whose key a
 * blob is.
 */
import { createHash } from 'node:crypto';
import type { Db, TenantScope } from '../db';
import { SshKeysRepo } from './ssh-keys.repo';
import type { SshKeyView } from '../contract';
import { AppError } from '../errors';
import type { EventBus, RequestMeta } from '../events';
import { personActor, type Actor } from './actor';
import type { UsersRepo } from './users.repo';
import { lazyRequire } from '../lib/lazy';

/** ssh2 (CommonJS) loads with the first key parsed: most installs never add one. */
const ssh2 = lazyRequire<typeof import('ssh2')>('ssh2');
/** Keys one account may hold. */
const MAX_KEYS = 50;
/** Key types ssh2 verifies; `sk-*` (security keys) and DSA are not among them. */
const ALGOS = new Set(['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa']);

/** OpenSSH's `SHA256:` fingerprint of a public key blob. */
export function sshFingerprint(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

const bad = (reason: string) => new AppError('validation_failed', { field: 'public_key', reason }, { field: 'public_key', reason });

/** The algorithm, blob and comment of one OpenSSH public key line (`ssh-ed25519 AAAA… comment`); else `validation_failed`. */
export function parseSshPublicKey(line: string): { algo: string; blob: Buffer; comment: string } {
  const text = line.trim();
  if (text.includes('PRIVATE KEY')) throw bad('a private key: paste the .pub file');
  if (text.split(/\r?\n/).length > 1) throw bad('one key per entry');
  const key = ssh2().utils.parseKey(text);
  if (key instanceof Error || Array.isArray(key)) throw bad('not an OpenSSH public key');
  if (key.isPrivateKey()) throw bad('a private key: paste the .pub file');
  if (!ALGOS.has(key.type)) throw bad(`key type ${key.type} is not supported`);
  if (key.type === 'ssh-rsa' && rsaBits(key.getPublicSSH()) < 2048) throw bad('RSA keys need at least 2048 bits');
  return { algo: key.type, blob: key.getPublicSSH(), comment: key.comment ?? '' };
}

/** The modulus size of an `ssh-rsa` blob (string type, mpint e, mpint n). */
function rsaBits(blob: Buffer): number {
  let at = 4 + blob.readUInt32BE(0);
  at += 4 + blob.readUInt32BE(at);
  const n = blob.subarray(at + 4, at + 4 + blob.readUInt32BE(at));
  const lead = n[0] === 0 ? 1 : 0;
  return (n.length - lead) * 8;
}

export class SshKeys {
  private keys: SshKeysRepo;

  constructor(
    db: Db,
    private repo: UsersRepo,
    private bus: EventBus,
  ) {
    this.keys = new SshKeysRepo(db);
  }

  /** The account's keys, oldest first. */
  list(s: TenantScope, userId: number): Promise<SshKeyView[]> {
    return this.keys.list(s, userId);
  }

  /**
   * Registers `publicKey` (one OpenSSH line) for the account; the name
   * defaults to the key's comment. The same key twice → `conflict`; more than
   * MAX_KEYS → `too_many`; not a usable public key → `validation_failed`.
   */
  async add(s: TenantScope, userId: number, input: { name?: string; publicKey: string }, req: RequestMeta): Promise<SshKeyView> {
    const k = parseSshPublicKey(input.publicKey);
    const fingerprint = sshFingerprint(k.blob);
    const name = (input.name?.trim() || k.comment.trim() || fingerprint).slice(0, 100);
    const id = await this.keys.add(
      s,
      { user_id: userId, name, algo: k.algo, public_key: k.blob.toString('base64'), fingerprint, created_at: new Date().toISOString() },
      MAX_KEYS,
    );
    if (id === 'duplicate') throw new AppError('conflict', { reason: 'this key is already registered' }, { field: 'public_key' });
    if (id === 'full') throw new AppError('too_many', { max: MAX_KEYS });
    void this.bus.emit(s, 'audit', {
      action: 'auth.ssh_key.add',
      actor: await this.who(s, userId),
      request: req,
      resource: `user:${userId}`,
      meta: { id, name, fingerprint },
    });
    return (await this.list(s, userId)).find((x) => x.id === id)!;
  }

  /** Removes one of the account's keys; another account's or a missing id → `not_found`. */
  async remove(s: TenantScope, userId: number, id: number, req: RequestMeta): Promise<void> {
    const row = await this.keys.remove(s, userId, id);
    if (!row) throw new AppError('not_found', { id });
    void this.bus.emit(s, 'audit', {
      action: 'auth.ssh_key.remove',
      actor: await this.who(s, userId),
      request: req,
      resource: `user:${userId}`,
      meta: { id, ...row },
    });
  }

  /**
   * The actor `blob` signs in as when it is a key of the account named
   * `login` (e-mail or username) in tenant `s` (the one the gateway's `name@slug` selected) and the account
   * is enabled; null otherwise.
   * With `signed` (the client proved it holds the private key) the key's use
   * is recorded and the sign-in audited (`auth.login`, `meta.kind` = protocol).
   */
  async signIn(s: TenantScope, login: string, blob: Buffer, req: RequestMeta & { ip: string }, protocol: string, signed: boolean): Promise<Actor | null> {
    const u = await this.repo.byLogin(s, login);
    if (!u || u.disabled) return null;
    const row = await this.keys.byFingerprint(u, u.id, sshFingerprint(blob));
    if (!row || row.public_key !== blob.toString('base64')) return null;
    const p = await this.repo.principal(u, u.id, `${protocol}:${u.id}`);
    if (!p) return null;
    if (signed) {
      await this.keys.touch(u, row.id, new Date().toISOString());
      void this.bus.emit(u, 'audit', {
        action: 'auth.login',
        actor: { id: u.id, email: u.email },
        request: req,
        meta: { kind: protocol, method: 'publickey', ssh_key_id: row.id },
      });
    }
    return personActor(p, req);
  }

  private async who(s: TenantScope, userId: number) {
    const u = await this.repo.byId(s, userId);
    return u ? { id: u.id, email: u.email } : null;
  }
}
