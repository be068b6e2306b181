/**
 * A person with a home folder (files/homes.ts on the server) lands in it: the
 * first time this page load shows the top of the files section (`/` or
 * `/files`), the route is replaced by the home's. Later visits to the top, by
 * the breadcrumb or Back, stay there. Admins (who see everything) are not moved.
 * The sign-in answer does not name the home, so it is asked of `/api/auth/me` then.
 */
import { useEffect } from 'react';
import { api } from '../api/client';
import type { User } from '../api/types';
import { navigate } from '../lib/router';
import { routeOf } from '../lib/ui-path';
import { withoutBase } from '../lib/base';

let landed = false;
const atTop = () => ['/', '/files', '/files/'].includes(withoutBase(location.pathname));

export function useLandHome(user: Pick<User, 'role' | 'home'>): void {
  useEffect(() => {
    if (landed || user.role === 'admin') return;
    landed = true;
    if (!atTop()) return;
    const go = (home: string | null | undefined) => home && atTop() && navigate(routeOf(home), true);
    if (user.home !== undefined) return void go(user.home);
    api<{ user: User }>('/api/auth/me', { quiet401: true }).then(
      (r) => go(r.user.home),
      () => undefined,
    );
  }, []);
}
