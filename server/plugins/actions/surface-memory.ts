/**
 * The form fields of the last surface each person was shown per app view, so
 * a `submit` is checked against what was on screen (422 `required`/`invalid`)
 * before the app sees it. Bounded (oldest out) and short-lived; a person with
 * two tabs of the same view is checked against the later one.
 */
import type { Actor } from '../../auth';

const MAX = 5_000;
const TTL_MS = 60 * 60_000;
type Fields = Map<string, Record<string, unknown>>;

export class SurfaceMemory {
  private m = new Map<string, { at: number; fields: Fields }>();

  private key(a: Actor, plugin: string, view: string) {
    return `${a.kind === 'system' ? 'system' : a.principal.id}\u0000${plugin}\u0000${view}`;
  }

  set(a: Actor, plugin: string, view: string, fields: Fields) {
    const k = this.key(a, plugin, view);
    this.m.delete(k);
    this.m.set(k, { at: Date.now(), fields });
    if (this.m.size > MAX) this.m.delete(this.m.keys().next().value!);
  }

  /** The fields last shown (none known: nothing to check). */
  get(a: Actor, plugin: string, view: string): Fields {
    const e = this.m.get(this.key(a, plugin, view));
    return e && Date.now() - e.at < TTL_MS ? e.fields : new Map();
  }
}
