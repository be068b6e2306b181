/**
 * The one MIME table: the type of a file by its name (backends rarely store
 * one), mime-types' database plus the few extensions our files need read
 * otherwise (`.ts` is TypeScript here, not an MPEG stream). The catalogue,
 * storage drivers, app actions and the UI's static files all ask here, so a
 * file has one type whichever door it went through.
 */
import mime from 'mime-types';

const EXTRA: Record<string, string> = { md: 'text/markdown', heic: 'image/heic', avif: 'image/avif', mkv: 'video/x-matroska', ts: 'text/x-typescript' };

/** The type of `name` by its extension; `application/octet-stream` when unknown. */
export function mimeOf(name: string): string {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  return EXTRA[ext] ?? (mime.lookup(name) || 'application/octet-stream');
}

/** A Content-Type header for `name`: its type, with `charset=utf-8` for text. */
export const contentTypeOf = (name: string): string => mime.contentType(mimeOf(name)) || 'application/octet-stream';
