/**
 * Which generator a file goes to: by MIME type first, by extension when the
 * MIME type says nothing useful (missing or application/octet-stream).
 */
import { extOf } from '../lib/paths';

export type ThumbKind = 'image' | 'bmp' | 'heif' | 'svg' | 'video' | 'audio' | 'pdf' | 'office' | 'other';

const IMAGE_MIMES: Record<string, ThumbKind> = {
  'image/jpeg': 'image',
  'image/pjpeg': 'image',
  'image/png': 'image',
  'image/gif': 'image',
  'image/tiff': 'image',
  'image/webp': 'image',
  'image/bmp': 'bmp',
  'image/x-ms-bmp': 'bmp',
  'image/x-bmp': 'bmp',
  'image/heic': 'heif',
  'image/heif': 'heif',
  'image/heic-sequence': 'heif',
  'image/heif-sequence': 'heif',
  'image/avif': 'heif',
  'image/svg+xml': 'svg',
  'application/pdf': 'pdf',
};

const OFFICE_MIME =
  /^application\/(msword|rtf|vnd\.ms-(excel|powerpoint|word)|vnd\.openxmlformats-officedocument\.|vnd\.oasis\.opendocument\.(text|spreadsheet|presentation|graphics))/;

const EXTS: Record<string, ThumbKind> = {};
const add = (kind: ThumbKind, list: string) => list.split(' ').forEach((e) => (EXTS[e] = kind));
add('image', 'jpg jpeg jpe jfif png gif tif tiff webp');
add('bmp', 'bmp dib');
add('heif', 'heic heif avif');
add('svg', 'svg');
add('video', 'mp4 m4v mov mkv webm avi wmv flv mpg mpeg m2ts mts 3gp ogv');
add('audio', 'mp3 wav flac ogg oga opus m4a aac wma aiff aif');
add('pdf', 'pdf');
add('office', 'doc docx docm dot dotx odt ott rtf xls xlsx xlsm ods ots csv ppt pptx pps ppsx odp otp odg');

/** The generator kind of a file. */
export function kindOf(mime: string | null, name: string): ThumbKind {
  const m = (mime ?? '').toLowerCase().split(';')[0].trim();
  if (IMAGE_MIMES[m]) return IMAGE_MIMES[m];
  if (m.startsWith('video/')) return 'video';
  if (m.startsWith('audio/')) return 'audio';
  if (OFFICE_MIME.test(m)) return 'office';
  return EXTS[extOf(name)] ?? 'other';
}
