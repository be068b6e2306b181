/** What the signed-out pages offer besides the password: single sign-on, sign-up (`GET /api/capabilities` → `auth`). */
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import type { Capabilities } from '../api/types';

/** The server's sign-in options, or null while unknown (and when the server does not say). */
export function useSignInOptions(): Capabilities['auth'] | null {
  const [auth, setAuth] = useState<Capabilities['auth'] | null>(null);
  useEffect(() => {
    let live = true;
    // Fresh, not the hour-long cached copy: an admin may just have switched sign-in or sign-up on.
    api<Capabilities>('/api/capabilities', { quiet401: true, cache: 'no-cache' }).then(
      (c) => live && setAuth(c.auth),
      () => {},
    );
    return () => {
      live = false;
    };
  }, []);
  return auth;
}
