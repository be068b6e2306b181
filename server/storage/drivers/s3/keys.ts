/**
 * How the storage's relative paths map onto object keys below the prefix.
 * S3 has no folders: a folder is a key prefix, kept alive when empty by a
 * hidden `.empty` marker object.
 */
import { AppError } from '../../../errors';

/** Marker object that keeps an empty folder visible; never listed. */
export const FOLDER_MARKER = '.empty';
/** S3's ceiling on a whole key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

export class KeyMap {
  /** `prefix` has no leading or trailing slash and is never empty (the root guard). */
  constructor(private readonly prefix: string) {}

  /** Key of the object at `rel`; '' is refused since the root is a folder. */
  file(rel: string): string {
    const key = `${this.prefix}/${rel}`;
    if (rel.split('/').includes(FOLDER_MARKER))
      throw new AppError(
        'name_not_allowed',
        { reason: 'backend' },
        { code: 'NAME_NOT_ALLOWED', reason: 'backend' },
        `s3: "${FOLDER_MARKER}" marks empty folders and cannot be a name`,
      );
    if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw new AppError('name_too_long', { max: MAX_KEY_BYTES }, { max: MAX_KEY_BYTES });
    return key;
  }

  /** Key prefix of everything inside the folder `rel` (ends with '/'). */
  folder(rel: string): string {
    return rel === '' ? `${this.prefix}/` : `${this.file(rel)}/`;
  }

  /** Key of the marker of the folder `rel`. */
  marker(rel: string): string {
    return this.folder(rel) + FOLDER_MARKER;
  }

  /** Relative path of `key` below the folder prefix `base` (from `folder()`). */
  static below(base: string, key: string): string {
    return key.slice(base.length);
  }
}

/** True for keys that only stand for a folder: our marker, or a `name/` object other tools create. */
export const isFolderKey = (key: string): boolean => key.endsWith('/') || key === FOLDER_MARKER || key.endsWith(`/${FOLDER_MARKER}`);

/** The key in the form CopyObject's CopySource wants: bucket and each segment URL-encoded. */
export const copySource = (bucket: string, key: string): string => `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

/** An ETag without the quotes S3 wraps it in. */
export const bareEtag = (etag: string | undefined): string => (etag ?? '').replace(/^W\//, '').replace(/"/g, '');
