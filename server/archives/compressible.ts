/** Which files are worth deflating when a ZIP is created with `compression: deflate`. */
import { extOf } from '../lib/paths';

/** Already-compressed formats: deflating them costs time and saves nothing, so they are stored. */
const COMPRESSED = new Set(
  (
    'jpg jpeg png gif webp avif heic heif jxl mp4 m4v mov mkv webm avi wmv mp3 m4a aac ogg oga opus flac ' +
    'zip gz tgz bz2 xz zst 7z rar docx xlsx pptx odt ods odp epub jar apk pdf woff woff2'
  ).split(' '),
);

/** True when the entry should be deflated. */
export const shouldCompress = (name: string): boolean => !COMPRESSED.has(extOf(name));
