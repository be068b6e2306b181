/**
 * What the public page of an encrypted link can show of a decrypted file,
 * judged by its true name (the server never knew it, so it sent no type).
 * The same passive types the plain link pages show inline: raster images,
 * plain text (never rendered as HTML), and PDF.
 */
export type PreviewKind = 'image' | 'text' | 'pdf' | null;

const IMAGE: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  avif: 'image/avif',
};
const TEXT = new Set(['txt', 'md', 'markdown', 'csv', 'log', 'json', 'yml', 'yaml', 'ini', 'conf', 'xml', 'html', 'css', 'js', 'ts', 'py', 'sh']);

const extOf = (name: string): string => {
  const i = name.lastIndexOf('.');
  return i > 0 ? name.slice(i + 1).toLowerCase() : '';
};

export function previewKind(name: string): PreviewKind {
  const ext = extOf(name);
  if (IMAGE[ext]) return 'image';
  if (ext === 'pdf') return 'pdf';
  return TEXT.has(ext) ? 'text' : null;
}

/** The Blob type for a preview; text stays `text/plain` whatever it holds (an HTML file is shown, not run). */
export function previewType(name: string): string {
  const kind = previewKind(name);
  if (kind === 'image') return IMAGE[extOf(name)];
  if (kind === 'pdf') return 'application/pdf';
  return kind === 'text' ? 'text/plain;charset=utf-8' : 'application/octet-stream';
}
