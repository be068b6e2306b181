/**
 * A person with a home folder (files/homes.ts on the server) lands in it: the
 * first time this page load shows the top of the files section (`/` or
 * `/files`), the route is replaced by the home's. Later visits to the top, by
 * the breadcrumb or Back, stay there. Admins (who see everything) are not moved.
 */
import { useEffect } from 'react';
import { navigate } from '../lib/router';
import { routeOf } from '../lib/ui-path';

let landed = false;

export function useLandHome(user: { role: string; home?: string | null }, pathname: string): void {
  useEffect(() => {
    if (landed) return;
    landed = true;
    if (user.role !== 'admin' && user.home && (pathname === '/' || pathname === '/files' || pathname === '/files/')) navigate(routeOf(user.home), true);
  }, []);
}
