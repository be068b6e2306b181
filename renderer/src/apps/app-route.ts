/** The route of an app view in page placement: `/app/{plugin}/{view}?path=…` (one `path` per selected item). */
export const appRoute = (plugin: string, view: string, paths: string[]) =>
  `/app/${encodeURIComponent(plugin)}/${encodeURIComponent(view)}${paths.length ? `?${paths.map((p) => `path=${encodeURIComponent(p)}`).join('&')}` : ''}`;

/** The plugin, view and paths of an app route, or null for any other path. */
export function parseAppRoute(pathname: string, search: string): { plugin: string; view: string; paths: string[] } | null {
  const m = /^\/app\/([^/]+)\/([^/]+)\/?$/.exec(pathname);
  if (!m) return null;
  return { plugin: decodeURIComponent(m[1]), view: decodeURIComponent(m[2]), paths: new URLSearchParams(search).getAll('path') };
}
