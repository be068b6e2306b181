/**
 * What the one-shot CLI commands work with: the same services the server
 * composes (plugin drivers, the write gate, protection hooks), with nothing
 * started. Ops a command enqueues are run by the server (at once when it is
 * running on the same data folder).
 */
import type { Config } from '../config';
import { compose } from '../compose';
import { createLogger } from '../lib/log';

export async function openCliContext(config: Config) {
  const sv = await compose(config, { role: 'cli', logger: createLogger('warn') });
  return {
    ...sv,
    cliRequest: { ip: 'cli', ua: 'service-cli' },
    async close() {
      await sv.bus.flush();
      await sv.close();
    },
  };
}
