/** `service serve`: runs the server until SIGINT/SIGTERM or a host's drain command. */
import type { Config } from '../config';
import { startServer } from '../main';
import { onHostCommand } from '../lib/host-port';
import { parse } from './args';

const USAGE = `
Usage: service serve
Starts Filedock. Configure it with SERVICE_* environment variables or a config
file (SERVICE_CONFIG); see the README's configuration table.`;

export async function serveCommand(argv: string[], config: Config): Promise<number> {
  parse(argv, {}, USAGE);
  // One stray promise must not take every user's session down with it: log it and keep serving.
  process.on('unhandledRejection', (e) => console.error('unhandled rejection (kept running):', e));
  const server = await startServer(config);
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (why: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`${why}: draining`);
      server.close().then(
        () => resolve(0),
        (e) => {
          console.error('shutdown failed', e);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    onHostCommand((c) => {
      if (c.type === 'drain') stop('drain requested by host');
      else if (c.type === 'pause') server.pause(c.paused);
      else if (c.type === 'power' || c.type === 'sleep' || c.type === 'wake') server.power(c);
    });
  });
}
