/** MIME type by extension (backends rarely store one) and the image/video flags of listings. */
import mime from 'mime-types';

const EXTRA: Record<string, string> = { md: 'text/markdown', heic: 'image/heic', avif: 'image/avif', mkv: 'video/x-matroska', ts: 'text/x-typescript' };

export function mimeOf(name: string): string {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  return EXTRA[ext] ?? (mime.lookup(name) || 'application/octet-stream');
}

export const isImage = (m: string | null): boolean => !!m && m.startsWith('image/');
export const isVideo = (m: string | null): boolean => !!m && m.startsWith('video/');
export const isText = (m: string | null): boolean =>
  !!m && (m.startsWith('text/') || /^application\/(json|xml|javascript|x-sh|x-yaml|yaml|toml|sql)/.test(m));
