/** Pure helpers for decrypted media: a type from the decrypted name, thumbnail dimensions. */
import { extOf } from '../lib/format';

const TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
};

/**
 * The MIME type a decrypted file is shown as, from its name (the server never saw it). SVG is left
 * untyped: as an image/svg+xml blob opened in a frame it could run script.
 */
export function mimeOfName(name: string): string {
  const t = TYPES[extOf(name).toLowerCase()] ?? 'application/octet-stream';
  return t === 'image/svg+xml' ? 'application/octet-stream' : t;
}

/** The size of a thumbnail whose longer side is at most `max` px (never upscaled, at least 1 px). */
export function thumbSize(w: number, h: number, max: number): { w: number; h: number } {
  const scale = Math.min(1, max / Math.max(w, h, 1));
  return { w: Math.max(1, Math.round(w * scale)), h: Math.max(1, Math.round(h * scale)) };
}
