/**
 * Where diagram files open: `/diagram/<ui path>` (the editor page, a lazy
 * chunk) when the server has a diagram editor configured. Kept apart from the
 * page so the shell and the file list need not load it.
 */
import { api } from '../../api/client';
import type { Capabilities } from '../../api/types';
import { routeOf, uiPathOfRoute } from '../../lib/ui-path';

/** How a diagram file stores its diagram: plain XML, or an image that embeds it. */
export type DiagramFormat = 'xml' | 'xmlsvg' | 'xmlpng';

/** `.drawio`, `.drawio.svg`, `.drawio.png` (and draw.io's older `.dio`); null for anything else. */
export function diagramFormat(name: string): DiagramFormat | null {
  const n = name.toLowerCase();
  if (n.endsWith('.drawio.svg') || n.endsWith('.dio.svg')) return 'xmlsvg';
  if (n.endsWith('.drawio.png') || n.endsWith('.dio.png')) return 'xmlpng';
  if (n.endsWith('.drawio') || n.endsWith('.dio')) return 'xml';
  return null;
}

export const DIAGRAM_ROUTE = '/diagram';
export const isDiagramRoute = (pathname: string): boolean => pathname.startsWith(DIAGRAM_ROUTE + '/');
/** The page's route for a diagram file's UI path. */
export const diagramRoute = (uiPath: string): string => DIAGRAM_ROUTE + routeOf(uiPath).slice('/files'.length);
export const diagramPathOfRoute = (pathname: string): string => uiPathOfRoute(pathname.slice(DIAGRAM_ROUTE.length));
export const isDiagramName = (name: string): boolean => diagramFormat(name) !== null;

/** The configured editor URL, asked fresh (an admin may just have set it); '' when none. */
export async function diagramEditorUrl(): Promise<string> {
  const c = await api<Capabilities>('/api/capabilities', { cache: 'no-cache' });
  return c.external?.diagram_url ?? '';
}
