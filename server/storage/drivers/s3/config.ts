/**
 * The `s3` storage config as the spec's table gives it, parsed once into
 * typed settings. Problems are listed all at once, field by field.
 */

export interface S3Settings {
  bucket: string;
  /** Storage root inside the bucket, without leading or trailing slashes; never empty. */
  prefix: string;
  /** Region used for signing; `auto` signs as us-east-1 and follows AWS's redirects. */
  region: string;
  endpoint?: string;
  pathStyle: boolean;
  /** Absent means the SDK's default credential chain (env, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  disablePresign: boolean;
}

export type Problem = { field: string; message: string };

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

/** `true`/`false` as booleans or the strings a form or an env var sends; null when absent or `auto`. */
function flag(v: unknown): boolean | null | 'invalid' {
  if (v === undefined || v === null || v === '' || v === 'auto') return null;
  if (typeof v === 'boolean') return v;
  const s = str(v).toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off'].includes(s)) return false;
  return 'invalid';
}

/**
 * Parses a resolved config (aliases already folded in). Returns the settings,
 * or the problems that keep the storage from initialising.
 */
export function parseS3Config(config: Record<string, unknown>): { settings?: S3Settings; problems: Problem[] } {
  const problems: Problem[] = [];
  const bucket = str(config.bucket);
  if (!bucket) problems.push({ field: 'bucket', message: 'bucket is required' });
  else if (bucket.includes('/')) problems.push({ field: 'bucket', message: 'bucket must be a bucket name, without "/"' });

  // The root guard: a storage never spans a whole bucket.
  const prefix = str(config.prefix).replace(/^\/+|\/+$/g, '');
  if (!prefix) problems.push({ field: 'prefix', message: 'prefix must name a folder inside the bucket (the bucket root is refused)' });
  else if (prefix.split('/').some((s) => s === '' || s === '.' || s === '..'))
    problems.push({ field: 'prefix', message: 'prefix must not contain empty, "." or ".." segments' });

  const endpoint = str(config.endpoint) || undefined;
  if (endpoint) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(endpoint).protocol);
    } catch {
      ok = false;
    }
    if (!ok) problems.push({ field: 'endpoint', message: 'endpoint must be an http:// or https:// URL' });
  }

  const pathStyle = flag(config.path_style);
  if (pathStyle === 'invalid') problems.push({ field: 'path_style', message: 'path_style must be auto, true or false' });
  const disablePresign = flag(config.disable_presign);
  if (disablePresign === 'invalid') problems.push({ field: 'disable_presign', message: 'disable_presign must be true or false' });

  const accessKeyId = str(config.access_key);
  const secretAccessKey = str(config.secret_key);
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
    problems.push({ field: accessKeyId ? 'secret_key' : 'access_key', message: 'access_key and secret_key go together' });

  if (problems.length) return { problems };
  return {
    problems,
    settings: {
      bucket,
      prefix,
      region: str(config.region) || 'auto',
      endpoint,
      pathStyle: pathStyle === null ? Boolean(endpoint) : (pathStyle as boolean),
      credentials: accessKeyId ? { accessKeyId, secretAccessKey } : undefined,
      disablePresign: disablePresign === true,
    },
  };
}
