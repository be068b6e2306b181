/**
 * WebDAV write locks (class 2), kept in memory: a restart drops them, which
 * clients survive (they re-lock or write without a token after a 412, and the
 * data is never at risk since locks only ever refuse). A lock is keyed by the
 * node's place (`<storage id>:<rel>`), so a storage reached by name or by uid
 * is the same lock, and a rename of the storage keeps it. Locks expire at
 * their timeout (at most MAX_TIMEOUT_S, refreshed by LOCK with the token); an
 * expired lock is dropped the next time anything looks, so nothing polls and
 * nothing leaks. At most MAX_LOCKS are held at once.
 */
import { randomUUID } from 'node:crypto';
import { DavError } from './errors';

export const MAX_TIMEOUT_S = 3600;
const MAX_LOCKS = 10_000;

export interface Lock {
  token: string;
  /** The locked node's key (see `placeKey`) and its request path (for lockroot). */
  key: string;
  root: string;
  scope: 'exclusive' | 'shared';
  depth: '0' | 'infinity';
  /** The client's `DAV:owner` content, already serialized. */
  owner: string;
  timeoutS: number;
  expires: number;
  userId: number;
}

/** `a` is `b` or below it. */
const within = (a: string, b: string): boolean => a === b || a.startsWith(b.endsWith('/') ? b : b + '/');

export class LockTable {
  private locks = new Map<string, Lock>();

  /** Locks that cover `key` (on it, or depth-infinity on an ancestor). */
  covering(key: string): Lock[] {
    return this.live().filter((l) => l.key === key || (l.depth === 'infinity' && within(key, l.key)));
  }

  /** Locks on `key` or anything below it. */
  below(key: string): Lock[] {
    return this.live().filter((l) => within(l.key, key));
  }

  get(token: string): Lock | undefined {
    const l = this.locks.get(token);
    if (l && l.expires <= Date.now()) this.locks.delete(token);
    return l && l.expires > Date.now() ? l : undefined;
  }

  /** Takes a new lock; `locked` (423) when it conflicts with one held. */
  take(l: Omit<Lock, 'token' | 'expires'>): Lock {
    const held = l.depth === 'infinity' ? [...this.covering(l.key), ...this.below(l.key)] : this.covering(l.key);
    if (held.some((h) => h.scope === 'exclusive' || l.scope === 'exclusive'))
      throw new DavError(423, 'The item is locked by someone else.', 'no-conflicting-lock');
    if (this.locks.size >= MAX_LOCKS) throw new DavError(503, 'Too many locks are held; try again later.');
    const lock: Lock = { ...l, token: `opaquelocktoken:${randomUUID()}`, expires: Date.now() + l.timeoutS * 1000 };
    this.locks.set(lock.token, lock);
    return lock;
  }

  refresh(l: Lock, timeoutS: number): void {
    l.timeoutS = timeoutS;
    l.expires = Date.now() + timeoutS * 1000;
  }

  release(token: string): void {
    this.locks.delete(token);
  }

  /** Drops every lock on `key` or below (the node was moved away or deleted). */
  dropBelow(key: string): void {
    for (const l of this.below(key)) this.locks.delete(l.token);
  }

  /**
   * Refuses (423, `lock-token-submitted`) a write to `key` when a lock covers
   * it (or, for `deep` writes such as DELETE or MOVE of a folder, a lock below
   * it) and its token was not submitted.
   */
  check(key: string, submitted: Set<string>, deep: boolean): void {
    const held = deep ? [...this.covering(key), ...this.below(key)] : this.covering(key);
    if (held.some((l) => !submitted.has(l.token))) throw new DavError(423, 'The item is locked: send its lock token in the If header.', 'lock-token-submitted');
  }

  private live(): Lock[] {
    const now = Date.now();
    const out: Lock[] = [];
    for (const l of this.locks.values()) {
      if (l.expires <= now) this.locks.delete(l.token);
      else out.push(l);
    }
    return out;
  }

  get size(): number {
    return this.live().length;
  }
}

/** The granted timeout for a `Timeout:` header (`Second-n`, `Infinite`, a list): at most MAX_TIMEOUT_S. */
export function lockTimeout(header: string): number {
  for (const part of header.split(',')) {
    const m = /^\s*Second-(\d+)\s*$/i.exec(part);
    if (m) return Math.max(1, Math.min(MAX_TIMEOUT_S, Number(m[1])));
    if (/^\s*Infinite\s*$/i.test(part)) return MAX_TIMEOUT_S;
  }
  return MAX_TIMEOUT_S;
}

export interface IfCondition {
  not: boolean;
  token?: string;
  etag?: string;
}

/** One list of the `If` header, with its resource when tagged. */
export interface IfList {
  resource?: string;
  conditions: IfCondition[];
}

/** Parses an `If` header (RFC 4918 §10.4); a malformed header → 400. */
export function parseIf(header: string): IfList[] {
  const out: IfList[] = [];
  let resource: string | undefined;
  const re = /\s*(?:<([^>]*)>|\(([^)]*)\))/y;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < header.length && ((re.lastIndex = at), (m = re.exec(header)))) {
    at = re.lastIndex;
    if (m[1] !== undefined) {
      resource = m[1];
      continue;
    }
    const conditions: IfCondition[] = [];
    const c = /\s*(Not\s+)?(?:<([^>]*)>|\[([^\]]*)\])/iy;
    let cm: RegExpExecArray | null;
    let ci = 0;
    const body = m[2];
    while (ci < body.length && ((c.lastIndex = ci), (cm = c.exec(body)))) {
      ci = c.lastIndex;
      conditions.push({ not: !!cm[1], token: cm[2], etag: cm[3] });
    }
    if (body.slice(ci).trim() !== '' || !conditions.length) throw new DavError(400, 'The If header is malformed.');
    out.push({ resource, conditions });
  }
  if (header.slice(at).trim() !== '') throw new DavError(400, 'The If header is malformed.');
  return out;
}

/** Every lock token the `If` header names (submitted tokens, RFC 4918 §10.4.1). */
export const submittedTokens = (lists: IfList[]): Set<string> =>
  new Set(lists.flatMap((l) => l.conditions.filter((c) => c.token && !c.not).map((c) => c.token!)));
