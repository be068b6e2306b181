/** File-type glyphs drawn with inline SVG (no icon font: keeps the bundle small). */
import type { Entry } from '../api/types';
import { extOf } from '../lib/format';

const KIND: Record<string, string> = {
  jpg: 'image',
  jpeg: 'image',
  png: 'image',
  gif: 'image',
  webp: 'image',
  svg: 'image',
  bmp: 'image',
  heic: 'image',
  avif: 'image',
  mp4: 'video',
  mkv: 'video',
  mov: 'video',
  webm: 'video',
  avi: 'video',
  mp3: 'audio',
  wav: 'audio',
  flac: 'audio',
  ogg: 'audio',
  m4a: 'audio',
  opus: 'audio',
  pdf: 'pdf',
  zip: 'archive',
  tar: 'archive',
  gz: 'archive',
  '7z': 'archive',
  rar: 'archive',
  doc: 'doc',
  docx: 'doc',
  odt: 'doc',
  xls: 'sheet',
  xlsx: 'sheet',
  ods: 'sheet',
  csv: 'sheet',
  ppt: 'slide',
  pptx: 'slide',
  odp: 'slide',
};
const COLOR: Record<string, string> = {
  dir: 'var(--folder)',
  image: '#2f9e6f',
  video: '#c2410c',
  audio: '#8b5cf6',
  pdf: '#dc2626',
  archive: '#a16207',
  doc: '#2563eb',
  sheet: '#15803d',
  slide: '#ea580c',
  file: 'var(--muted)',
};

/** The coarse kind of an entry, used for icons and for choosing a preview. */
export function kindOf(e: Pick<Entry, 'name' | 'type' | 'mime'>): string {
  if (e.type === 'dir') return 'dir';
  const m = e.mime ?? '';
  if (m.startsWith('image/')) return 'image';
  if (m.startsWith('video/')) return 'video';
  if (m.startsWith('audio/')) return 'audio';
  if (m === 'application/pdf') return 'pdf';
  return KIND[extOf(e.name)] ?? 'file';
}

export function FileIcon({ entry, size = 20 }: { entry: Pick<Entry, 'name' | 'type' | 'mime'>; size?: number }) {
  const k = kindOf(entry);
  const fill = COLOR[k] ?? COLOR.file;
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" className="ficon">
      {k === 'dir' ? (
        <path fill={fill} d="M2 6a2 2 0 0 1 2-2h5l2 2h9a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2z" />
      ) : (
        <>
          <path fill={fill} d="M6 2h8l6 6v12a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2z" />
          <path fill="rgba(255,255,255,.55)" d="M14 2v6h6" />
        </>
      )}
    </svg>
  );
}
