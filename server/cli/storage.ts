/** `service storage add|list|remove`: the admin storage API's gates, on the command line. */
import type { Config } from '../config';
import { AppError } from '../errors';
import { openCliContext } from './context';
import { tenantOf, TENANT_OPTION } from './tenant';
import { helpIfAsked, parse, UsageError } from './args';

const USAGE = `
Usage:
  service storage add --name <name> --driver <driver> --config '<json object>' [--mount /] [--sync-mode poll|fsnotify|ondemand] [--read-only] [--open]
  service storage list [--json]
  service storage remove --name <name or uid>
An unknown driver is refused, --config must be a JSON object and the root guard applies;
required fields missing from the config are only a warning (the server reports them when it opens the storage).
A new storage starts with access control on (the admin alone until grants open it); --open makes one every
signed-in person sees. --tenant <slug> works in that tenant (multi-tenant mode, docs/tenants.md); without it,
tenant 1.`;

export async function storageCommand(argv: string[], config: Config): Promise<number> {
  helpIfAsked(argv, USAGE);
  const [sub, ...rest] = argv;
  const { values } = parse(
    rest,
    {
      name: { type: 'string' },
      driver: { type: 'string' },
      config: { type: 'string' },
      mount: { type: 'string' },
      'sync-mode': { type: 'string' },
      'read-only': { type: 'boolean' },
      open: { type: 'boolean' },
      json: { type: 'boolean' },
      ...TENANT_OPTION,
    },
    USAGE,
  );
  const c = await openCliContext(config);
  try {
    const scope = await tenantOf(c.db, values.tenant);
    if (sub === 'add') {
      if (!values.name || !values.driver) throw new UsageError('--name and --driver are required' + USAGE);
      let cfg: unknown = {};
      if (values.config !== undefined) {
        try {
          cfg = JSON.parse(values.config);
        } catch {
          throw new UsageError('--config must be a JSON object');
        }
        if (!cfg || typeof cfg !== 'object' || Array.isArray(cfg)) throw new UsageError('--config must be a JSON object');
      }
      const s = await c.catalogue.storages.create(
        scope,
        {
          name: values.name,
          driver: values.driver,
          config: cfg,
          mount_path: values.mount,
          sync_mode: values['sync-mode'],
          read_only: values['read-only'],
          rbac_enabled: !values.open,
        },
        { request: c.cliRequest, lenient: true, skipProbe: true },
      );
      console.log(`added storage ${s.id} "${s.name}" (${s.driver}: ${s.config_summary}) uid ${s.uid}`);
    } else if (sub === 'list') {
      const all = c.catalogue.storages.list(scope);
      if (values.json) console.log(JSON.stringify(all, null, 2));
      else
        for (const s of all)
          console.log(
            `${String(s.id).padStart(4)}  ${s.name.padEnd(20)} ${s.driver.padEnd(8)} ${s.enabled ? '' : '(disabled) '}${s.read_only ? '(read-only) ' : ''}${s.config_summary}`,
          );
    } else if (sub === 'remove') {
      if (!values.name) throw new UsageError('--name is required' + USAGE);
      const row = c.catalogue.repo.byNameOrUid(scope, values.name);
      if (!row) throw new AppError('not_found', { path: values.name });
      await c.catalogue.storages.delete(scope, row.id, { request: c.cliRequest });
      console.log(`removed storage "${row.name}" (files on the backend are untouched)`);
    } else {
      throw new UsageError(USAGE);
    }
    return 0;
  } catch (e) {
    if (e instanceof AppError && e.code === 'validation_failed') throw new UsageError(`invalid ${e.params.field}: ${e.params.reason ?? ''}`);
    throw e;
  } finally {
    await c.close();
  }
}
