/**
 * UI paths (`/<storage>/<relative path>`, `/` lists the storages). Names are
 * checked by the server; here we only join and split, never normalise `..`.
 */

/** `/a/b` + `c` -> `/a/b/c`; the root joins without a double slash. */
export function joinPath(dir: string, name: string): string {
  return dir === '/' || dir === '' ? `/${name}` : `${dir.replace(/\/+$/, '')}/${name}`;
}

/** Parent folder; the root is its own parent. */
export function parentPath(p: string): string {
  const i = p.replace(/\/+$/, '').lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

/** Last segment (the name); '' for the root. */
export function baseName(p: string): string {
  const s = p.replace(/\/+$/, '');
  return s.slice(s.lastIndexOf('/') + 1);
}

/** Crumbs from the root: `/a/b` -> [{name:'a', path:'/a'}, {name:'b', path:'/a/b'}]. */
export function crumbs(p: string): { name: string; path: string }[] {
  const out: { name: string; path: string }[] = [];
  let acc = '';
  for (const seg of p.split('/').filter(Boolean)) {
    acc += `/${seg}`;
    out.push({ name: seg, path: acc });
  }
  return out;
}

/** True when `p` is `dir` or inside it (for refusing a move of a folder into itself). */
export function isInside(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

/** The storage segment of a UI path, or null at the root. */
export function storageOf(p: string): string | null {
  return crumbs(p)[0]?.name ?? null;
}

/** The browser route of a folder: `/files` + UI path, each segment URL-encoded. */
export function routeOf(uiPath: string): string {
  return `/files${crumbs(uiPath)
    .map((c) => `/${encodeURIComponent(c.name)}`)
    .join('')}`;
}

/** Inverse of routeOf for the current location. */
export function uiPathOfRoute(pathname: string): string {
  const rest = pathname.replace(/^\/files/, '');
  const segs = rest
    .split('/')
    .filter(Boolean)
    .map((s) => decodeURIComponent(s));
  return segs.length ? `/${segs.join('/')}` : '/';
}

/** UI path -> share path (`<storage>://<relative path>`), the form share rows use. */
export function toSharePath(uiPath: string): string {
  const [storage, ...rest] = crumbs(uiPath).map((c) => c.name);
  return `${storage ?? ''}://${rest.join('/')}`;
}

/** Share path -> UI path, for showing a link's item as a location. */
export function fromSharePath(sharePath: string): string {
  const i = sharePath.indexOf('://');
  if (i < 0) return sharePath;
  return `/${sharePath.slice(0, i)}${sharePath.slice(i + 3) ? `/${sharePath.slice(i + 3)}` : ''}`;
}
