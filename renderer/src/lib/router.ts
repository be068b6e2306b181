/**
 * History routing without a library: `/files/<ui path>`, `/links`, `/trash`, `/admin/<tab>`.
 * The server answers every unknown path with index.html, so deep links work.
 */
import { useEffect, useState } from 'react';
import { withBase, withoutBase } from './base';

const EVENT = 'filedock:navigate';

/** Pushes `to` (or replaces the entry) and tells every usePathname hook. */
export function navigate(to: string, replace = false): void {
  if (to === withoutBase(location.pathname) + location.search) return;
  if (replace) history.replaceState(null, '', withBase(to));
  else history.pushState(null, '', withBase(to));
  window.dispatchEvent(new Event(EVENT));
}

/** The current pathname (without the app's base path), re-rendering on navigation (links, back/forward). */
export function usePathname(): string {
  const [p, setP] = useState(() => withoutBase(location.pathname));
  useEffect(() => {
    const on = () => setP(withoutBase(location.pathname));
    window.addEventListener('popstate', on);
    window.addEventListener(EVENT, on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener(EVENT, on);
    };
  }, []);
  return p;
}

/** onClick for <a href>: keeps middle/ctrl clicks as new tabs, routes plain clicks in-app. */
export function linkClick(e: React.MouseEvent<HTMLAnchorElement>): void {
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(withoutBase(e.currentTarget.getAttribute('href') ?? '/'));
}
