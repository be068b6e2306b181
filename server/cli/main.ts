#!/usr/bin/env node
/**
 * The `service` command line. Exit codes: 0 ok, 1 failure, 2 bad configuration
 * (every bad key is listed, or a database URL that leads nowhere), 3 data folder locked by another instance, 64 usage.
 */
import { loadConfig, ConfigError } from '../config';
import { LockedError, SecretKeyError } from '../lib/data-dir';
import { toHost } from '../lib/host-port';
import { isAppError } from '../errors';
import { DatabaseUrlError } from '../db/pg/url-error';
import { t } from '../lib/i18n';
import { VERSION } from '../version';
import { UsageError } from './args';

const USAGE = `
Filedock ${VERSION}: a file hub for home and small offices.

Usage: service <command> [options]

Commands:
  serve                     start the server (also: npm start)
  user add|list|passwd      manage accounts
  storage add|list|remove   manage storages
  thumb backfill            generate missing thumbnails (--help for the flags)
  db migrate-to <url>       copy the catalogue into an empty PostgreSQL database (docs/postgresql.md)
  backup create|restore     back up this install into one archive, or restore one (docs/operations.md)
  self-update [--check] [--to <version>]
                            check for and install a new release (docs/updates.md)
  install-systemd           write a hardened systemd unit for this install (docs/operations.md)
  store keygen|build|verify make, sign or check an app store (docs/app-store.md)
  version                   print the version
Run "service <command> --help" for the options of a command.`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    console.log(USAGE.trim());
    return cmd ? 0 : 64;
  }
  if (cmd === 'version' || cmd === '--version') {
    console.log(VERSION);
    return 0;
  }
  // A store is files and keys: no configuration or database needed.
  if (cmd === 'store') return (await import('./store')).storeCommand(rest);
  const config = loadConfig();
  // Each command loads on first use: `version`, `--help` and a bad configuration answer without the server's
  // modules and SDKs (issue 37: `service version` took 2-3.5 s and ~140 MB when every command loaded up front).
  switch (cmd) {
    case 'serve':
      return (await import('./serve')).serveCommand(rest, config);
    case 'user':
      return (await import('./user')).userCommand(rest, config);
    case 'storage':
      return (await import('./storage')).storageCommand(rest, config);
    case 'thumb':
      return (await import('./thumb')).thumbCommand(rest, config);
    case 'db':
      return (await import('./db')).dbCommand(rest, config);
    case 'backup':
      return (await import('./backup')).backupCommand(rest, config);
    case 'self-update':
      return (await import('./self-update')).selfUpdateCommand(rest, config);
    case 'install-systemd':
      return (await import('./install-systemd')).installSystemdCommand(rest, config);
    default:
      throw new UsageError(`unknown command "${cmd}"\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    let code = 1;
    let message: string;
    if (e instanceof ConfigError || e instanceof DatabaseUrlError || e instanceof SecretKeyError) {
      code = 2;
      message = e.message;
    } else if (e instanceof LockedError) {
      code = 3;
      message = e.message;
    } else if (e instanceof UsageError) {
      code = 64;
      message = e.message;
    } else if (isAppError(e)) {
      message = `${e.code}: ${t('en', e.code, e.params)}`;
    } else {
      message = e instanceof Error ? (e.stack ?? e.message) : String(e);
    }
    console.error(message);
    toHost({ type: 'fatal', message, code });
    process.exit(code);
  },
);
