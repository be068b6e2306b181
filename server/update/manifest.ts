/**
 * The release manifest (spec, Versioning 7): one static JSON document per
 * channel. Validation is strict on the fields we act on and silent on fields
 * we do not know, so a newer manifest keeps working with an older service.
 */
import { z } from 'zod';
import { compareVersions, isVersion } from './semver';

const version = z.string().refine(isVersion, 'must be an x.y.z version');

const assetSchema = z.object({
  os: z.string().min(1),
  arch: z.string().min(1),
  url: z.string().min(1),
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits')
    .transform((s) => s.toLowerCase()),
});

const releaseSchema = z.object({
  version,
  date: z.string(),
  auto_ok: z.boolean(),
  migrations: z.boolean(),
  severity: z.string().min(1),
  notes: z
    .string()
    .nullish()
    .transform((s) => s ?? ''),
  notes_url: z
    .string()
    .nullish()
    .transform((s) => s ?? ''),
  image: z
    .string()
    .nullish()
    .transform((s) => s ?? ''),
  min_version: version.optional(),
  assets: z.array(assetSchema),
});

const manifestSchema = z.object({ channel: z.string().min(1), releases: z.array(releaseSchema) });

export type Asset = z.infer<typeof assetSchema>;
export type Release = z.infer<typeof releaseSchema>;
export interface Manifest {
  channel: string;
  /** Ascending by version, no duplicates. */
  releases: Release[];
}

export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

/**
 * Validates a fetched manifest and resolves asset URLs against `baseUrl`, so a
 * mirror may list relative paths. Throws ManifestError naming the first bad
 * field; unknown fields are dropped.
 */
export function parseManifest(body: unknown, baseUrl: string): Manifest {
  const r = manifestSchema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ManifestError(`manifest field ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const releases = [...r.data.releases].sort((a, b) => compareVersions(a.version, b.version));
  for (let i = 1; i < releases.length; i++)
    if (releases[i].version === releases[i - 1].version) throw new ManifestError(`manifest lists ${releases[i].version} twice`);
  for (const rel of releases)
    for (const a of rel.assets) {
      let u: URL;
      try {
        u = new URL(a.url, baseUrl);
      } catch {
        throw new ManifestError(`manifest asset url of ${rel.version} is not a URL`);
      }
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new ManifestError(`manifest asset url of ${rel.version} must be http(s)`);
      a.url = u.href;
    }
  return { channel: r.data.channel, releases };
}

/** The asset built for this OS and CPU (Node's `process.platform` / `process.arch` names), or null. */
export const assetFor = (release: Release, os: string, arch: string): Asset | null => release.assets.find((a) => a.os === os && a.arch === arch) ?? null;
