/**
 * `GET /api/capabilities` for the signed-in app, read once per page load and
 * shared (the file manager asks on every folder): what the server offers, such
 * as the document server and the new-document types.
 */
import { useEffect, useState } from 'react';
import { api } from './client';
import type { Capabilities } from './types';

let pending: Promise<Capabilities | null> | null = null;

/** The capabilities (fresh at the first call of a page load); null when the server did not answer. */
export function capabilities(): Promise<Capabilities | null> {
  // Fresh, not a cached copy: an admin may just have configured the document server.
  pending ??= api<Capabilities>('/api/capabilities', { cache: 'no-cache' }).catch(() => {
    pending = null;
    return null;
  });
  return pending;
}

/** Forgets the shared copy (after an admin changes what the server offers). */
export function forgetCapabilities(): void {
  pending = null;
}

/** The capabilities, or null while unknown. */
export function useCapabilities(): Capabilities | null {
  const [caps, setCaps] = useState<Capabilities | null>(null);
  useEffect(() => {
    let live = true;
    void capabilities().then((c) => live && setCaps(c));
    return () => {
      live = false;
    };
  }, []);
  return caps;
}
