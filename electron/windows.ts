/**
 * The Filedock window's safety and memory, without Electron: the
 * BrowserWindow options (isolated, sandboxed, no Node), the navigation guard
 * that keeps the window on the server's origin, and the store that remembers
 * the window's bounds across launches.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BrowserWindowConstructorOptions, Rectangle } from 'electron';

export interface WindowState {
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

export const DEFAULT_WINDOW: Readonly<WindowState> = Object.freeze({ width: 1200, height: 800, maximized: false });
const MIN = { width: 480, height: 360 };

/**
 * Options of the main window: the preload bridge is the page's only way out
 * of the sandbox; node integration, remote content features and web views stay off.
 */
export function mainWindowOptions(preloadPath: string, state: WindowState, iconPath?: string): BrowserWindowConstructorOptions {
  return {
    x: state.x,
    y: state.y,
    width: state.width,
    height: state.height,
    minWidth: MIN.width,
    minHeight: MIN.height,
    show: false,
    title: 'Filedock',
    icon: iconPath,
    autoHideMenuBar: true,
    backgroundColor: '#ffffff',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      spellcheck: true,
    },
  };
}

/** Options of the small QR / public-links panels: same isolation, no preload unless given. */
export function panelWindowOptions(title: string, width: number, height: number, preloadPath?: string): BrowserWindowConstructorOptions {
  const main = mainWindowOptions(preloadPath ?? '', { width, height, maximized: false });
  return {
    ...main,
    title,
    minWidth: undefined,
    minHeight: undefined,
    resizable: false,
    minimizable: false,
    maximizable: false,
    webPreferences: { ...main.webPreferences, preload: preloadPath, spellcheck: false },
  };
}

export type NavigationVerdict = 'allow' | 'external' | 'deny';

/**
 * Decides a navigation of the window to `target`: the server's own origin
 * stays in the window; http(s) and mailto links elsewhere go to the default
 * browser; every other scheme (file:, javascript:, data:, custom) is denied.
 * A malformed URL is denied.
 */
export function navigationVerdict(target: string, serverOrigin: string): NavigationVerdict {
  let u: URL;
  try {
    u = new URL(target);
  } catch {
    return 'deny';
  }
  if ((u.protocol === 'http:' || u.protocol === 'https:') && u.origin === new URL(serverOrigin).origin) return 'allow';
  if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'mailto:') return 'external';
  return 'deny';
}

/** True when `url` may be handed to the OS to open (the bridge's openExternal). */
export const isExternalSafe = (url: string): boolean => navigationVerdict(url, 'http://0.invalid') === 'external';

/**
 * Remembers the window's bounds in a small JSON file. `load` never throws:
 * a missing or broken file, or bounds that no longer fit on any display
 * (a monitor was unplugged), give a centred default size.
 */
export class WindowStateStore {
  constructor(readonly path: string) {}

  /** The saved state, kept only if it overlaps one of `displays` (work areas) by a usable amount. */
  load(displays: Rectangle[]): WindowState {
    if (!existsSync(this.path)) return { ...DEFAULT_WINDOW };
    let s: Partial<WindowState>;
    try {
      s = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch {
      return { ...DEFAULT_WINDOW };
    }
    const width = Math.max(MIN.width, Number.isFinite(s.width) ? Number(s.width) : DEFAULT_WINDOW.width);
    const height = Math.max(MIN.height, Number.isFinite(s.height) ? Number(s.height) : DEFAULT_WINDOW.height);
    const maximized = s.maximized === true;
    if (!Number.isFinite(s.x) || !Number.isFinite(s.y)) return { width, height, maximized };
    const rect = { x: Number(s.x), y: Number(s.y), width, height };
    return displays.some((d) => visible(rect, d)) ? { ...rect, maximized } : { width, height, maximized };
  }

  /** Saves the state atomically; the normal (unmaximized) bounds are kept so un-maximizing restores them. */
  save(state: WindowState): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, this.path);
  }
}

/** At least 100x50 px of the window's top area (its title bar) must be on the display. */
function visible(w: Rectangle, d: Rectangle): boolean {
  const overlapX = Math.min(w.x + w.width, d.x + d.width) - Math.max(w.x, d.x);
  const top = Math.max(w.y, d.y);
  return overlapX >= 100 && w.y >= d.y - 10 && top + 50 <= d.y + d.height;
}
