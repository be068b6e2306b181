/** MIME type by extension (server/lib/mime.ts) and the image/video/text flags of listings. */
export { mimeOf } from '../lib/mime';

export const isImage = (m: string | null): boolean => !!m && m.startsWith('image/');
export const isVideo = (m: string | null): boolean => !!m && m.startsWith('video/');
export const isText = (m: string | null): boolean => !!m && (m.startsWith('text/') || /^application\/(json|xml|javascript|x-sh|x-yaml|yaml|toml|sql)/.test(m));
