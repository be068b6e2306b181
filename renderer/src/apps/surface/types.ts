/**
 * The sanitised surface as the server sends it (docs/app-plugins.md, "Surfaces";
 * SPEC App plugin rows). Everything in it is plain text written by an app: the
 * UI shows it only as React text, never as markup.
 */
export interface Condition {
  key: string;
  equals: string[];
}

export type FieldType = 'string' | 'password' | 'int' | 'bool' | 'select' | 'text' | 'date';

export interface FormField {
  key: string;
  type: FieldType;
  label?: string;
  help?: string;
  placeholder?: string;
  required?: boolean;
  default?: string | number | boolean;
  min?: number;
  max?: number;
  max_length?: number;
  options?: Array<{ value: string; label?: string }>;
  show_when?: Condition;
  required_when?: Condition;
}

export interface PdfField {
  key: string;
  label?: string;
  page: number;
  x: number;
  y: number;
  w: number;
  h: number;
  kind: 'text' | 'signature' | 'date' | 'checkbox';
  required?: boolean;
}

export type SurfaceNode =
  | { type: 'text'; id?: string; text: string; style?: 'body' | 'title' | 'muted' | 'error' | 'success' }
  | { type: 'form'; id?: string; fields: FormField[] }
  | { type: 'steps'; id?: string; steps: string[]; current?: number }
  | { type: 'list'; id?: string; items: Array<{ id?: string; title: string; subtitle?: string; path?: string }> }
  | { type: 'progress'; id?: string; value?: number; label?: string }
  | { type: 'people-picker'; id?: string; key: string; label?: string; multi?: boolean; required?: boolean }
  | { type: 'pin-input'; id?: string; key: string; label?: string; length?: number; required?: boolean }
  | { type: 'file-chooser'; id?: string; key: string; label?: string; multi?: boolean; kind?: 'file' | 'dir'; ext?: string[]; required?: boolean }
  | { type: 'pdf-fields'; id?: string; key?: string; path: string; fields?: PdfField[] }
  | { type: 'signature-pad'; id?: string; key: string; label?: string; required?: boolean }
  | { type: 'preview'; id?: string; path: string; page?: number }
  | { type: 'divider'; id?: string }
  | { type: 'row'; id?: string; children: SurfaceNode[] };

export interface FooterAction {
  id: string;
  label: string;
  primary?: boolean;
  danger?: boolean;
}

export interface SurfaceData {
  title?: string;
  nodes: SurfaceNode[];
  footer: FooterAction[];
  state?: unknown;
}

export type SurfaceEvent = 'open' | 'change' | 'action' | 'submit';

/** A value a person entered: text, a number, a flag, a list (people, files) or a nested map (PDF fields). */
export type Value = string | number | boolean | string[] | Record<string, unknown> | undefined;
export type Values = Record<string, Value>;

/** Why a field is refused, by key: the server's `reasons` or the client's own hint. */
export type FieldErrors = Record<string, string>;
