/**
 * The server side of surfaces (SPEC App plugin rows: Surface): what an app
 * returns is cut down to the node catalogue before any browser sees it.
 * Unknown node types and unknown properties are dropped (never passed on, so
 * no `html` or handler can ride along), every string is plain text with the
 * control characters removed and a byte cap, and the spec's limits hold:
 * at most 500 nodes, depth 8, 8 footer actions. The web UI still escapes all
 * text; this is the second wall, and the one that bounds the size.
 */

export const SURFACE_LIMITS = {
  nodes: 500,
  depth: 8,
  footer: 8,
  text_bytes: 4096,
  key_chars: 128,
  /** Items of one list, steps of a `steps` node, fields of a form, options of a select, fields of a PDF. */
  items: 200,
  /** The opaque state an app keeps in the surface (sent back with each event). */
  state_bytes: 64 * 1024,
};

export const NODE_TYPES = [
  'text',
  'form',
  'steps',
  'list',
  'progress',
  'people-picker',
  'pin-input',
  'file-chooser',
  'pdf-fields',
  'signature-pad',
  'preview',
  'divider',
  'row',
] as const;
export const FIELD_TYPES = ['string', 'password', 'int', 'bool', 'select', 'text', 'date'] as const;

export type SurfaceNode = { type: (typeof NODE_TYPES)[number]; [prop: string]: unknown };
export interface FooterAction {
  id: string;
  label: string;
  primary?: boolean;
  danger?: boolean;
}
export interface Surface {
  title?: string;
  nodes: SurfaceNode[];
  footer: FooterAction[];
  state?: unknown;
}

/** A property's cleaner: the clean value, or undefined to drop it. */
type Clean = (v: unknown) => unknown;

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
/** Plain text: control characters (but tab and newline) removed, cut at the byte cap on a character boundary. */
export function plain(v: unknown, maxBytes = SURFACE_LIMITS.text_bytes): string | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  let s = String(v).replace(CONTROL, '');
  if (Buffer.byteLength(s) > maxBytes) {
    s = Buffer.from(s)
      .subarray(0, maxBytes)
      .toString('utf8')
      .replace(/\uFFFD+$/, '');
  }
  return s;
}
const text: Clean = (v) => plain(v);
const key: Clean = (v) => (typeof v === 'string' && /^[A-Za-z0-9_.:-]{1,128}$/.test(v) ? v : undefined);
const bool: Clean = (v) => (typeof v === 'boolean' ? v : undefined);
const num =
  (min: number, max: number): Clean =>
  (v) =>
    typeof v === 'number' && Number.isFinite(v) ? Math.min(max, Math.max(min, v)) : undefined;
const int =
  (min: number, max: number): Clean =>
  (v) =>
    Number.isInteger(v) ? Math.min(max, Math.max(min, v as number)) : undefined;
const oneOf =
  (...values: string[]): Clean =>
  (v) =>
    typeof v === 'string' && values.includes(v) ? v : undefined;
const list =
  (item: Clean, max = SURFACE_LIMITS.items): Clean =>
  (v) =>
    Array.isArray(v)
      ? v
          .slice(0, max)
          .map(item)
          .filter((x) => x !== undefined)
      : undefined;
/** A closed object: only the named properties survive, each cleaned; `required` ones must survive or the object is dropped. */
const shape =
  (props: Record<string, Clean>, required: string[] = []): Clean =>
  (v) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const out: Record<string, unknown> = {};
    for (const [k, clean] of Object.entries(props)) {
      const c = clean((v as Record<string, unknown>)[k]);
      if (c !== undefined) out[k] = c;
    }
    return required.every((k) => k in out) ? out : undefined;
  };

const condition = shape({ key, equals: list((x) => plain(x, 256), 32) }, ['key', 'equals']);
const field = shape(
  {
    key,
    type: oneOf(...FIELD_TYPES),
    label: text,
    help: text,
    placeholder: text,
    required: bool,
    default: (v) => (typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) ? v : plain(v)),
    min: num(-1e15, 1e15),
    max: num(-1e15, 1e15),
    max_length: int(1, 65536),
    options: list(shape({ value: (x) => plain(x, 256), label: text }, ['value']), 64),
    show_when: condition,
    required_when: condition,
  },
  ['key', 'type'],
);

/** Each node type's properties (besides `type`, and `children` of a row). */
const NODE_PROPS: Record<Exclude<SurfaceNode['type'], 'row'>, Clean> = {
  text: shape({ id: key, text, style: oneOf('body', 'title', 'muted', 'error', 'success') }, ['text']),
  form: shape({ id: key, fields: list(field, 64) }, ['fields']),
  steps: shape({ id: key, steps: list(text, 20), current: int(0, 19) }, ['steps']),
  list: shape({ id: key, items: list(shape({ id: key, title: text, subtitle: text, path: text }, ['title'])) }, ['items']),
  progress: shape({ id: key, value: num(0, 1), label: text }),
  'people-picker': shape({ id: key, key, label: text, multi: bool, required: bool }, ['key']),
  'pin-input': shape({ id: key, key, label: text, length: int(4, 12), required: bool }, ['key']),
  'file-chooser': shape(
    {
      id: key,
      key,
      label: text,
      multi: bool,
      kind: oneOf('file', 'dir'),
      ext: list((x) => (typeof x === 'string' && /^[a-z0-9]{1,16}$/.test(x) ? x : undefined), 64),
      required: bool,
    },
    ['key'],
  ),
  'pdf-fields': shape(
    {
      id: key,
      key,
      path: text,
      fields: list(
        shape(
          {
            key,
            label: text,
            page: int(1, 100_000),
            x: num(0, 1e6),
            y: num(0, 1e6),
            w: num(0, 1e6),
            h: num(0, 1e6),
            kind: oneOf('text', 'signature', 'date', 'checkbox'),
            required: bool,
          },
          ['key', 'page', 'kind'],
        ),
      ),
    },
    ['path'],
  ),
  'signature-pad': shape({ id: key, key, label: text, required: bool }, ['key']),
  preview: shape({ id: key, path: text, page: int(1, 100_000) }, ['path']),
  divider: shape({ id: key }),
};

const footerAction = shape({ id: key, label: text, primary: bool, danger: bool }, ['id', 'label']) as (v: unknown) => FooterAction | undefined;

/**
 * Cleans the nodes of one level. `budget` counts the nodes kept so far across
 * the whole surface: past 500, the rest are dropped; so are rows past depth 8.
 */
function cleanNodes(raw: unknown, depth: number, budget: { left: number }): SurfaceNode[] {
  if (!Array.isArray(raw) || depth > SURFACE_LIMITS.depth) return [];
  const out: SurfaceNode[] = [];
  for (const n of raw) {
    if (budget.left <= 0) break;
    const type = (n as { type?: unknown })?.type;
    if (type === 'row') {
      if (depth === SURFACE_LIMITS.depth) continue; // a row at the deepest level could hold nothing
      budget.left--;
      out.push({ type, children: cleanNodes((n as { children?: unknown }).children, depth + 1, budget) });
      continue;
    }
    const clean = typeof type === 'string' && Object.hasOwn(NODE_PROPS, type) ? NODE_PROPS[type as keyof typeof NODE_PROPS] : null;
    const props = clean?.(n) as Record<string, unknown> | undefined;
    if (!props) continue; // unknown type, or a node missing what it needs
    budget.left--;
    out.push({ type: type as SurfaceNode['type'], ...props });
  }
  return out;
}

/** The surface an app returned, within the catalogue and the limits. Anything that is not an object is an empty surface. */
export function sanitiseSurface(raw: unknown): Surface {
  const r = (raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  const surface: Surface = {
    nodes: cleanNodes(r.nodes, 1, { left: SURFACE_LIMITS.nodes }),
    footer: (list(footerAction, SURFACE_LIMITS.footer)(r.footer) as FooterAction[] | undefined) ?? [],
  };
  const title = plain(r.title, 512);
  if (title !== undefined) surface.title = title;
  if (r.state !== undefined) {
    const s = JSON.stringify(r.state);
    if (s !== undefined && Buffer.byteLength(s) <= SURFACE_LIMITS.state_bytes) surface.state = JSON.parse(s);
  }
  return surface;
}

/** Counts nodes and the deepest level (tests, and the limits' documentation). */
export function measure(nodes: SurfaceNode[], depth = 1): { nodes: number; depth: number } {
  let count = 0;
  let deepest = nodes.length ? depth : depth - 1;
  for (const n of nodes) {
    count++;
    if (n.type === 'row') {
      const m = measure(n.children as SurfaceNode[], depth + 1);
      count += m.nodes;
      deepest = Math.max(deepest, m.depth);
    }
  }
  return { nodes: count, depth: deepest };
}

/** The form fields a surface declares, by key (the event route checks submitted values against them). */
export function formFields(s: Surface): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const walk = (nodes: SurfaceNode[]) => {
    for (const n of nodes) {
      if (n.type === 'row') walk(n.children as SurfaceNode[]);
      if (n.type === 'form') for (const f of n.fields as Array<Record<string, unknown>>) out.set(f.key as string, f);
    }
  };
  walk(s.nodes);
  return out;
}
