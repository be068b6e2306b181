/** `service self-update [--check] [--to <version>]` (docs/updates.md). */
import { DEFAULT_TENANT } from '../db';
import type { Config } from '../config';
import { createUpdater, selfUpdateCli, updaterOptionsFromConfig } from '../update';
import { openCliContext } from './context';

export async function selfUpdateCommand(argv: string[], config: Config): Promise<number> {
  const c = await openCliContext(config);
  try {
    const updater = createUpdater({
      ...updaterOptionsFromConfig(config),
      snapshotDb: (base) => c.db.snapshot(base),
      emit: (event, payload) => void c.bus.emit(DEFAULT_TENANT, event, payload as never),
      log: { info: (m) => console.log(m), warn: (m) => console.error(m) },
    });
    return await selfUpdateCli(argv, { updater, out: (line) => console.log(line) });
  } finally {
    await c.close();
  }
}
