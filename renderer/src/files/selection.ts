/**
 * Multi-selection over an ordered list of keys (entry names within a folder),
 * with the desktop conventions: click selects one, Ctrl/Cmd toggles, Shift
 * extends from the anchor, arrows move the focus (Shift extends), Space toggles.
 * Pure and immutable so React can compare states by identity.
 */
export interface Selection {
  readonly selected: ReadonlySet<string>;
  /** Where a Shift range starts. */
  readonly anchor: string | null;
  /** The row with keyboard focus. */
  readonly focus: string | null;
}

export const emptySelection: Selection = { selected: new Set(), anchor: null, focus: null };

export type ClickMods = { shift?: boolean; toggle?: boolean };

function range(keys: readonly string[], from: string | null, to: string): Set<string> {
  const a = from === null ? -1 : keys.indexOf(from);
  const b = keys.indexOf(to);
  if (a < 0) return new Set([to]);
  const [lo, hi] = a < b ? [a, b] : [b, a];
  return new Set(keys.slice(lo, hi + 1));
}

/** A pointer click on `key`: plain, toggle (Ctrl/Cmd), or range (Shift, Shift+Ctrl adds the range). */
export function click(s: Selection, keys: readonly string[], key: string, mods: ClickMods = {}): Selection {
  if (mods.shift) {
    const r = range(keys, s.anchor, key);
    if (mods.toggle) for (const k of s.selected) r.add(k);
    return { selected: r, anchor: s.anchor ?? key, focus: key };
  }
  if (mods.toggle) {
    const next = new Set(s.selected);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    return { selected: next, anchor: key, focus: key };
  }
  return { selected: new Set([key]), anchor: key, focus: key };
}

/**
 * Moves the focus by `delta` rows (±1 for up/down, ±columns in a grid, ±Infinity for Home/End).
 * Without Shift the selection follows the focus; with Shift it grows from the anchor;
 * with `keep` (Ctrl+arrow) only the focus moves.
 */
export function move(s: Selection, keys: readonly string[], delta: number, mods: { shift?: boolean; keep?: boolean } = {}): Selection {
  if (keys.length === 0) return s;
  const cur = s.focus === null ? -1 : keys.indexOf(s.focus);
  const last = keys.length - 1;
  let idx: number;
  // Home/End go to the ends even with no focus yet; an arrow then starts at the near end.
  if (!Number.isFinite(delta)) idx = delta > 0 ? last : 0;
  else if (cur < 0) idx = delta < 0 ? last : 0;
  else idx = Math.min(last, Math.max(0, cur + delta));
  const key = keys[idx];
  if (mods.keep) return { ...s, focus: key };
  if (mods.shift) return { selected: range(keys, s.anchor ?? s.focus ?? key, key), anchor: s.anchor ?? s.focus ?? key, focus: key };
  return { selected: new Set([key]), anchor: key, focus: key };
}

/** Space: toggles the focused row. */
export function toggleFocus(s: Selection): Selection {
  return s.focus === null ? s : click(s, [], s.focus, { toggle: true });
}

/** Ctrl+A. */
export function selectAll(keys: readonly string[], s: Selection): Selection {
  return { selected: new Set(keys), anchor: keys[0] ?? null, focus: s.focus ?? keys[0] ?? null };
}

/**
 * Keeps the selection valid after the list changed (rows deleted or renamed
 * elsewhere): unknown keys are dropped; the object is reused when nothing changed.
 */
export function prune(s: Selection, keys: readonly string[]): Selection {
  const present = new Set(keys);
  let changed = false;
  const selected = new Set<string>();
  for (const k of s.selected) {
    if (present.has(k)) selected.add(k);
    else changed = true;
  }
  const anchor = s.anchor !== null && present.has(s.anchor) ? s.anchor : null;
  const focus = s.focus !== null && present.has(s.focus) ? s.focus : null;
  if (!changed && anchor === s.anchor && focus === s.focus) return s;
  return { selected, anchor, focus };
}

/** The selected keys in list order (for actions that care, e.g. preview paging). */
export function ordered(s: Selection, keys: readonly string[]): string[] {
  return keys.filter((k) => s.selected.has(k));
}
