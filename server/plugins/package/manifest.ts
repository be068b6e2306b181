/**
 * The app manifest (`manifest.json`): checked field by field against a strict
 * shape. An unknown field is refused, not ignored, so a manifest written for a
 * newer service fails at install with the field's path instead of half-working.
 * Every refusal is `validation_failed` with `details.field` (a JSON path such
 * as `actions[0].applies.colour`) and `details.reason`.
 */
import { AppError } from '../../errors';
import { MAX_CALL_TIMEOUT_MS } from '../sandbox/protocol';
import { parseRange } from '../../lib/versions';

export const PERMISSIONS = ['files.read', 'files.write', 'ops', 'locks', 'state', 'http', 'storage', 'schedule', 'users.lookup', 'public_pages'] as const;
export type AppPermission = (typeof PERMISSIONS)[number];

export interface AppliesRule {
  kind?: 'file' | 'dir';
  ext?: string[];
  mime?: string[];
  multi?: boolean;
  min?: number;
  max?: number;
  state?: string[];
  no_state?: string[];
  writable?: boolean;
}
export interface ManifestAction {
  id: string;
  label: string;
  icon?: string;
  applies?: AppliesRule;
  view?: string;
  view_placement?: 'dialog' | 'panel';
  confirm?: string;
  min_role?: 'viewer' | 'editor' | 'admin';
  danger?: boolean;
  output_mode?: 'new_file' | 'replace' | 'none';
  read_only_ok?: boolean;
}
export interface ManifestView {
  id: string;
  label: string;
  placement: 'dialog' | 'panel' | 'page';
  icon?: string;
  applies?: AppliesRule;
}
/**
 * "Open with": the app offers a view or an action for files of these types (docs/app-plugins.md,
 * "Open rules"); `default` asks to be the double-click handler (the person or admin still decides).
 */
export interface ManifestOpenRule {
  ext?: string[];
  mime?: string[];
  view?: string;
  action?: string;
  label?: string;
  default?: boolean;
}
/** A paid app: its licence is signed by `store` (a store key the admin trusts); docs/app-plugins.md, "Licences". */
export interface ManifestLicense {
  required: boolean;
  store: string;
}
export interface Manifest {
  id: string;
  name: string;
  version: string;
  publisher: string;
  filex_range: string;
  description?: string;
  /** The language used when the reader's has no pack; its pack must exist. */
  default_language: string;
  permissions: AppPermission[];
  call_timeout_ms: number;
  http_hosts: string[];
  actions: ManifestAction[];
  views: ManifestView[];
  icons: Record<string, string>;
  open: ManifestOpenRule[];
  license?: ManifestLicense;
  /** The release day (`YYYY-MM-DD`, signed with the package): an upgrade of a paid app must fall within its licence's `updates_until`. */
  released?: string;
}

/** A field's checker: returns the cleaned value or throws via `bad`. */
type Check = (v: unknown, path: string) => unknown;

export const bad = (field: string, reason: string): never => {
  throw new AppError('validation_failed', { field, reason }, { field, reason }, `manifest: ${field}: ${reason}`);
};
const str =
  (re: RegExp, max = 200): Check =>
  (v, p) =>
    typeof v === 'string' && v.length <= max && re.test(v) ? v : bad(p, `must be a string matching ${re.source} (at most ${max} characters)`);
const text = (max: number) => str(/^[^\u0000-\u001f]+$/, max);
const oneOf =
  (...values: string[]): Check =>
  (v, p) =>
    typeof v === 'string' && values.includes(v) ? v : bad(p, `must be one of ${values.join(', ')}`);
const bool: Check = (v, p) => (typeof v === 'boolean' ? v : bad(p, 'must be true or false'));
const int =
  (min: number, max: number): Check =>
  (v, p) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? v : bad(p, `must be an integer from ${min} to ${max}`);
const list =
  (item: Check, max: number): Check =>
  (v, p) => {
    if (!Array.isArray(v)) return bad(p, 'must be a list');
    if (v.length > max) return bad(p, `at most ${max} items`);
    return v.map((x, i) => item(x, `${p}[${i}]`));
  };
const unique =
  (c: Check, key = (x: unknown) => (x as { id?: unknown })?.id ?? x): Check =>
  (v, p) => {
    const out = c(v, p) as unknown[];
    const seen = new Set();
    out.forEach((x, i) => (seen.has(key(x)) ? bad(`${p}[${i}]`, 'duplicate') : seen.add(key(x))));
    return out;
  };
/** A closed object: every key must be declared; `?` marks optional ones. */
const obj =
  (shape: Record<string, Check>): Check =>
  (v, p) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return bad(p || '$', 'must be an object');
    const at = (k: string) => (p ? `${p}.${k}` : k);
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) if (!(k in shape) && !(`${k}?` in shape)) bad(at(k), 'unknown field');
    for (const [decl, check] of Object.entries(shape)) {
      const optional = decl.endsWith('?');
      const k = optional ? decl.slice(0, -1) : decl;
      const value = (v as Record<string, unknown>)[k];
      if (value === undefined) {
        if (!optional) bad(at(k), 'required');
        continue;
      }
      out[k] = check(value, at(k));
    }
    return out;
  };

const ID = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const KEY = /^[A-Za-z0-9_.-]{1,128}$/; // a language-pack key (labels name keys, not text)
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/;
const FILE = /^(icons\/)[A-Za-z0-9_.-]{1,100}\.(png|svg)$/;
const applies = obj({
  'kind?': oneOf('file', 'dir'),
  'ext?': list(str(/^[a-z0-9]{1,16}$/), 64),
  'mime?': list(str(/^[a-z0-9.+-]+\/[a-z0-9.+*-]+$/), 64),
  'multi?': bool,
  'min?': int(0, 500),
  'max?': int(1, 500),
  'state?': list(str(KEY), 32),
  'no_state?': list(str(KEY), 32),
  'writable?': bool,
});
const manifestShape = obj({
  id: str(ID),
  name: text(100),
  version: str(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, 64),
  publisher: str(ID),
  filex_range: (v, p) => (typeof v === 'string' && parseRange(v) ? v : bad(p, 'must be a semver range such as ^0.1.0')),
  'description?': text(1000),
  default_language: str(/^[a-z]{2,3}(-[A-Z]{2})?$/, 8),
  'permissions?': unique(list(oneOf(...PERMISSIONS), PERMISSIONS.length)),
  'call_timeout_ms?': int(100, MAX_CALL_TIMEOUT_MS),
  'http_hosts?': unique(list(str(HOST, 260), 32)),
  'actions?': unique(
    list(
      obj({
        id: str(ID),
        label: str(KEY),
        'icon?': str(FILE),
        'applies?': applies,
        'view?': str(ID),
        'view_placement?': oneOf('dialog', 'panel'),
        'confirm?': str(KEY),
        'min_role?': oneOf('viewer', 'editor', 'admin'),
        'danger?': bool,
        'output_mode?': oneOf('new_file', 'replace', 'none'),
        'read_only_ok?': bool,
      }),
      64,
    ),
  ),
  'views?': unique(list(obj({ id: str(ID), label: str(KEY), placement: oneOf('dialog', 'panel', 'page'), 'icon?': str(FILE), 'applies?': applies }), 64)),
  'open?': list(
    obj({
      'ext?': list(str(/^[a-z0-9]{1,16}$/), 64),
      'mime?': list(str(/^[a-z0-9.+-]+\/[a-z0-9.+*-]+$/), 64),
      'view?': str(ID),
      'action?': str(ID),
      'label?': str(KEY),
      'default?': bool,
    }),
    32,
  ),
  'license?': obj({ required: bool, store: str(ID) }),
  'released?': (v, p) =>
    typeof v === 'string' && /^\d{4}-\d\d-\d\d$/.test(v) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v)
      ? v
      : bad(p, 'must be a day such as 2026-11-27'),
  'icons?': (v, p) => {
    const o = obj({ '16?': str(FILE), '32?': str(FILE), '64?': str(FILE), '128?': str(FILE) })(v, p);
    return o;
  },
});

/** Parses and checks a manifest (JSON text); cross-field rules included. */
export function parseManifest(json: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return bad('manifest.json', 'not valid JSON');
  }
  const m = manifestShape(raw, '') as Partial<Manifest>;
  const manifest: Manifest = {
    ...(m as Manifest),
    permissions: m.permissions ?? [],
    call_timeout_ms: m.call_timeout_ms ?? 5000,
    http_hosts: m.http_hosts ?? [],
    actions: m.actions ?? [],
    views: m.views ?? [],
    icons: m.icons ?? {},
    open: m.open ?? [],
  };
  const views = new Set(manifest.views.map((v) => v.id));
  manifest.actions.forEach((a, i) => a.view && !views.has(a.view) && bad(`actions[${i}].view`, `no view named ${a.view}`));
  if (manifest.http_hosts.length && !manifest.permissions.includes('http')) bad('http_hosts', 'needs the http permission');
  manifest.open.forEach((o, i) => {
    if (!!o.view === !!o.action) bad(`open[${i}]`, 'names exactly one of view or action');
    if (!o.ext?.length && !o.mime?.length) bad(`open[${i}]`, 'names at least one ext or mime');
    if (o.view && !views.has(o.view)) bad(`open[${i}].view`, `no view named ${o.view}`);
    if (o.action && !manifest.actions.some((a) => a.id === o.action)) bad(`open[${i}].action`, `no action named ${o.action}`);
  });
  return manifest;
}
