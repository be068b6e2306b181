/**
 * READDIR and READDIRPLUS pages, streamed from the catalogue. A cookie is an
 * entry's position in the listing; the listing a page stopped in is kept
 * (CURSOR_TTL_MS, MAX_CURSORS) under the cookie the next page will send, so
 * a folder of any size is read once, front to back. A cookie with no kept
 * listing (expired, or from before a restart) restarts the listing and
 * skips to its position. The cookie verifier is per process: a cookie from
 * another run of the server → BAD_COOKIE.
 */
import { randomBytes } from 'node:crypto';
import type { GatewayEntry } from '../index';
import { Nfs3, NfsError } from './errors';

const CURSOR_TTL_MS = 30_000;

/** A listed entry; catalogue listings carry the node's id. */
export type ListedEntry = GatewayEntry & { id?: number };
const MAX_CURSORS = 256;

export const COOKIE_VERF = randomBytes(8);
const ZERO_VERF = Buffer.alloc(8);

interface Cursor {
  it: AsyncIterator<ListedEntry>;
  /** Position of the next entry the iterator gives (1-based cookie of it). */
  next: number;
  /** An entry read but not sent (it did not fit the last page). */
  held: ListedEntry | null;
  at: number;
}

export class DirCursors {
  private cursors = new Map<string, Cursor>();

  /**
   * Entries of a folder from `cookie` on, one at a time: `take(fits)` gives
   * the next entry and its cookie while `fits(entry)` says it fits the page.
   * Call `keep` when the page is full to have the next page continue here.
   */
  async open(folder: string, cookie: number, verf: Buffer, list: () => AsyncIterable<ListedEntry>): Promise<Cursor> {
    if (cookie !== 0 && !verf.equals(COOKIE_VERF) && !verf.equals(ZERO_VERF)) throw new NfsError(Nfs3.BAD_COOKIE);
    const key = `${folder}\0${cookie}`;
    const kept = this.cursors.get(key);
    if (kept) {
      this.cursors.delete(key);
      return kept;
    }
    const c: Cursor = { it: list()[Symbol.asyncIterator](), next: 1, held: null, at: Date.now() };
    while (c.next <= cookie) {
      const r = await c.it.next();
      if (r.done) break;
      c.next++;
    }
    return c;
  }

  /** The next entry and its cookie, or null at the end. */
  async next(c: Cursor): Promise<{ entry: ListedEntry; cookie: number } | null> {
    if (c.held) {
      const entry = c.held;
      c.held = null;
      return { entry, cookie: c.next++ };
    }
    const r = await c.it.next();
    return r.done ? null : { entry: r.value, cookie: c.next++ };
  }

  /** Puts back an entry that did not fit, and keeps the listing for the page that starts after `lastCookie`. */
  keep(folder: string, c: Cursor, unsent: ListedEntry, lastCookie: number): void {
    c.held = unsent;
    c.next = lastCookie + 1;
    c.at = Date.now();
    const now = Date.now();
    for (const [k, v] of this.cursors) if (now - v.at > CURSOR_TTL_MS || this.cursors.size >= MAX_CURSORS) this.end(k, v);
    this.cursors.set(`${folder}\0${lastCookie}`, c);
  }

  /** Ends a listing that reached its end or was abandoned. */
  finish(c: Cursor): void {
    void c.it.return?.(undefined);
  }

  private end(k: string, c: Cursor): void {
    this.cursors.delete(k);
    this.finish(c);
  }
}
