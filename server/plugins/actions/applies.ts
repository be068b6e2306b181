/**
 * The applies rule (SPEC App plugin rows): whether an action or view fits a
 * selection. Every condition must hold for every item:
 *   kind (file|dir), ext (lower-case, files only), mime (`type/*` allowed),
 *   multi (false or unset: one item), min (default 1; 0 allows none) / max,
 *   state (the item holds at least one of these `app_state` keys of this app),
 *   no_state (it holds none of them), writable (the caller may change it).
 */
import type { AppliesRule } from '../package/manifest';

export interface SelectedItem {
  type: 'file' | 'dir';
  name: string;
  mime: string;
  /** The item's `app_state` items (`<plugin>:<key>`). */
  state: string[];
  writable: boolean;
  /** The app whose lock keeps the item from the caller but which may itself still write it (its token). */
  lockedBy?: string | null;
}

const extOf = (name: string) => (name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '');
const mimeFits = (mime: string, patterns: string[]) => patterns.some((p) => (p.endsWith('/*') ? mime.startsWith(p.slice(0, -1)) : mime === p));

/** Why the rule does not fit (an English reason for `details`), or null when it fits. */
export function misfit(rule: AppliesRule | undefined, plugin: string, items: SelectedItem[]): string | null {
  const r = rule ?? {};
  const n = items.length;
  const max = r.max ?? (r.multi ? 500 : 1);
  // `min: 0` lets an action run with no selection (a job a view starts); unset, one item is needed.
  const min = r.min ?? 1;
  if (n < min) return `needs at least ${min} item(s)`;
  if (n > max) return `takes at most ${max} item(s)`;
  const own = (keys: string[]) => new Set(keys.map((k) => `${plugin}:${k}`));
  const wanted = r.state?.length ? own(r.state) : null;
  const refused = r.no_state?.length ? own(r.no_state) : null;
  for (const it of items) {
    if (r.kind && it.type !== r.kind) return `${it.name}: only for a ${r.kind === 'dir' ? 'folder' : 'file'}`;
    if (r.ext?.length && (it.type !== 'file' || !r.ext.includes(extOf(it.name)))) return `${it.name}: only for ${r.ext.map((e) => '.' + e).join(', ')}`;
    if (r.mime?.length && (it.type !== 'file' || !mimeFits(it.mime, r.mime))) return `${it.name}: only for ${r.mime.join(', ')}`;
    if (wanted && !it.state.some((s) => wanted.has(s))) return `${it.name}: not in state ${r.state!.join(', ')}`;
    if (refused && it.state.some((s) => refused.has(s))) return `${it.name}: in state ${r.no_state!.join(', ')}`;
    if (r.writable && !it.writable) return `${it.name}: you cannot change it`;
  }
  return null;
}
