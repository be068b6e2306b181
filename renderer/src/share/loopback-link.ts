/**
 * A link made on the server computer from a page opened at 127.0.0.1 points
 * to "this computer" (issue 39, 15): nobody else can open it. The server says
 * where others reach it (`GET /api/network/addresses`); the same link at each
 * of those addresses is offered instead.
 */
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import { isLoopback } from '../account/pairing-base';

export interface Reach {
  public_url: string | null;
  loopback_only: boolean;
  urls: string[];
}

/** `link` with its origin replaced by `base` (path, query and fragment kept). */
export function atBase(link: string, base: string): string {
  const u = new URL(link);
  return new URL(u.pathname + u.search + u.hash, base).toString();
}

/** What the server says about its reach when `link` is a loopback address, else null. */
export function useLoopbackReach(link: string): Reach | null {
  const loop = isLoopback(link);
  const [reach, setReach] = useState<Reach | null>(null);
  useEffect(() => {
    if (!loop) return;
    let live = true;
    api<Reach>('/api/network/addresses')
      .then((r) => live && setReach(r))
      .catch(() => live && setReach({ public_url: null, loopback_only: false, urls: [] }));
    return () => {
      live = false;
    };
  }, [link, loop]);
  return loop ? reach : null;
}
