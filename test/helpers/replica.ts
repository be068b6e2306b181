/**
 * Replication test helpers: a primary storage with a linked target made
 * through the admin API, trees compared by sha256, and waits on the target.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from './server';

export type Tree = Record<string, string>;

/** Every file below `root` (relative path → sha256), internal folders left out unless `all`. */
export function localTree(root: string, all = false): Tree {
  const out: Tree = {};
  if (!existsSync(root)) return out;
  const walk = (dir: string, rel: string) => {
    for (const n of readdirSync(dir)) {
      if (!all && (n === '.service-trash' || n === '.versions' || n.startsWith('.~fd-') || n === '.service-staging')) continue;
      const p = join(dir, n);
      const r = rel ? `${rel}/${n}` : n;
      if (statSync(p).isDirectory()) walk(p, r);
      else out[r] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(root, '');
  return out;
}

/** Polls `fn` until it returns true (or throws the last mismatch after `ms`). */
export async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Writes a text file through the API (the file service, so the decorator sees it). */
export async function putText(s: TestServer, token: string, path: string, content: string): Promise<void> {
  const r = await s.api('POST', '/api/files/save-text', { token, body: { path, content } });
  if (r.status !== 200) throw new Error(`save-text ${path}: ${r.status} ${JSON.stringify(r.body)}`);
}

export async function ok<T = any>(p: Promise<{ status: number; body: T }>, status = 200): Promise<T> {
  const r = await p;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}
