/** `service thumb backfill`: generates missing thumbnails in this process and prints a summary. */
import type { Config } from '../config';
import { AppError } from '../errors';
import { openCliContext } from './context';
import { tenantOf, TENANT_OPTION } from './tenant';
import { parse, UsageError } from './args';

const USAGE = `
Usage:
  service thumb backfill [--storage <name or id>] [--limit <n>] [--retry-failed] [--retry-skipped]
                         [--concurrency <n>] [--progress-every <n>]
Walks file nodes (trashed and soft-deleted ones excluded) and generates the thumbnails that are missing;
ready thumbnails are never redone, failed and skipped ones only with the retry flags. Prints
{processed, ok, failed, skipped}; exits non-zero only on infrastructure errors. --tenant <slug>: --storage names
that tenant's storage (multi-tenant mode, docs/tenants.md).`;

const count = (v: string | undefined, name: string, fallback: number): number => {
  if (v === undefined) return fallback;
  if (!/^\d{1,9}$/.test(v)) throw new UsageError(`--${name} must be a whole number`);
  return Number(v);
};

export async function thumbCommand(argv: string[], config: Config): Promise<number> {
  const [sub, ...rest] = argv;
  const { values } = parse(
    rest,
    {
      storage: { type: 'string' },
      limit: { type: 'string' },
      'retry-failed': { type: 'boolean' },
      'retry-skipped': { type: 'boolean' },
      concurrency: { type: 'string' },
      'progress-every': { type: 'string' },
      ...TENANT_OPTION,
    },
    USAGE,
  );
  if (sub !== 'backfill') throw new UsageError(USAGE.trim());
  const concurrency = count(values.concurrency, 'concurrency', 4);
  if (concurrency < 1) throw new UsageError('--concurrency must be at least 1');
  const c = await openCliContext(config);
  try {
    const scope = await tenantOf(c.db, values.tenant);
    let storageId: number | undefined;
    if (values.storage !== undefined) {
      const row =
        c.catalogue.repo.byNameOrUid(scope, values.storage) ??
        (/^\d+$/.test(values.storage) ? c.catalogue.repo.byId(scope, Number(values.storage)) : undefined);
      if (!row) throw new AppError('not_found', { path: values.storage });
      storageId = row.id;
    }
    // Under this process's own governor: the CPU budget and the power state (SERVICE_POWER_STATE) apply here too.
    c.governor.start();
    const summary = await c.thumbs.backfill({
      storageId,
      limit: values.limit === undefined ? undefined : count(values.limit, 'limit', 0),
      retryFailed: values['retry-failed'],
      retrySkipped: values['retry-skipped'],
      concurrency,
      progressEvery: count(values['progress-every'], 'progress-every', 25),
      onProgress: (s) => console.error(`progress ${JSON.stringify(s)}`),
      slot: () => c.governor.acquire(),
    });
    console.log(JSON.stringify(summary));
    return 0;
  } finally {
    c.governor.stop();
    await c.close();
  }
}
