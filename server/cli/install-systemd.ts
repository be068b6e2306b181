/**
 * `service install-systemd`: writes the hardened unit for this install (its
 * Node, install folder, data folder and account) and prints the commands that
 * enable it. Needs no running systemd: it only writes a file.
 */
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config';
import { bundleRootOf } from '../update';
import { parse, UsageError } from './args';
import { DEFAULT_UNIT, ENV_FILE, renderUnit, underHome, unitPath, type UnitOptions } from './systemd-unit';

const DEFAULT_OUTPUT = '/etc/systemd/system/filedock.service';

const USAGE = `
Usage:
  service install-systemd [--output <file> | --output -] [--user <name>] [--data-dir <dir>]
                          [--storage <dir>]... [--force]
Writes a hardened systemd unit that starts this install (default output ${DEFAULT_OUTPUT};
"-" prints it). --user: the account it runs as (default ${DEFAULT_UNIT.user}); --data-dir: default
SERVICE_DATA_DIR when set, else ${DEFAULT_UNIT.dataDir}; --storage: a folder a local storage uses, made
writable in the sandbox (repeatable). An existing, different unit is replaced only with --force.
Settings (SERVICE_*) go in ${ENV_FILE}. See docs/operations.md, "systemd".`;

/** The checkout around this module (it holds package.json), for an install that is not a bundle. */
function checkoutRoot(): string | null {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) if (existsSync(join(dir, 'package.json'))) return dir;
  return null;
}

/** What ExecStart runs: the bundle's launcher, or this Node on the checkout's built CLI. */
function execOfThisInstall(): UnitOptions['exec'] {
  const bundle = bundleRootOf(process.execPath);
  if (bundle) {
    if (underHome(bundle)) throw new UsageError(`the bundle ${bundle} is under a home folder, which the unit hides: unpack it to e.g. /opt/filedock/server`);
    // The service may write the folder holding the bundle (a self-update swaps it there): never a shared one like /opt.
    if (!/filedock/i.test(basename(dirname(bundle))))
      throw new UsageError(
        `the bundle ${bundle} must sit in a folder of its own named for Filedock (e.g. /opt/filedock/server): the service gets write access to that folder`,
      );
    return { bundleRoot: unitPath(bundle, 'the install folder') };
  }
  const root = checkoutRoot();
  const cli = root && join(root, 'dist/server/cli.js');
  if (!cli || !existsSync(cli)) throw new UsageError('no built server next to this command: run "npm run build:app" in the checkout first');
  return { node: unitPath(process.execPath, 'the Node binary'), cli: unitPath(cli, 'the server entry') };
}

/** Writes `text` to `file` through a temp file in the same folder and a rename. */
function writeAtomic(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}`);
  try {
    writeFileSync(tmp, text, { mode: 0o644 });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export async function installSystemdCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      output: { type: 'string' },
      user: { type: 'string' },
      'data-dir': { type: 'string' },
      storage: { type: 'string', multiple: true },
      force: { type: 'boolean' },
    },
    USAGE,
  );
  if (positionals.length) throw new UsageError(`unexpected "${positionals[0]}"\n${USAGE}`);
  const user = values.user ?? DEFAULT_UNIT.user;
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(user))
    throw new UsageError(`--user must be a system account name (lower case letters, digits, _ and -; got ${JSON.stringify(user)})`);
  const opts: UnitOptions = {
    user,
    dataDir: unitPath(values['data-dir'] ?? (config.dataDir ? config.dataDirResolved : DEFAULT_UNIT.dataDir), 'the data folder'),
    exec: execOfThisInstall(),
    storages: (values.storage ?? []).map((s) => unitPath(s, '--storage')),
  };
  const unit = renderUnit(opts);
  if (values.output === '-') {
    process.stdout.write(unit);
    return 0;
  }
  const file = resolve(values.output ?? DEFAULT_OUTPUT);
  if (existsSync(file)) {
    if (statSync(file).isDirectory()) throw new UsageError(`--output ${file} is a folder; name the unit file`);
    if (readFileSync(file, 'utf8') === unit) {
      console.log(`${file} is already this unit; nothing changed`);
      return printNext(file, opts);
    }
    if (!values.force) {
      console.error(`${file} exists and differs from the unit for this install; --force replaces it (compare: service install-systemd --output -)`);
      return 1;
    }
  }
  writeAtomic(file, unit);
  console.log(`wrote ${file}`);
  return printNext(file, opts);
}

/** The commands that make the unit run, in order: the sandbox needs the account and the folders to exist first. */
function printNext(file: string, o: UnitOptions): number {
  const { user, dataDir } = o;
  console.log(
    [
      'Next, as root:',
      `  id ${user} >/dev/null 2>&1 || useradd --system --user-group --home-dir ${dataDir} --shell /usr/sbin/nologin ${user}`,
      `  install -d -o ${user} -g ${user} -m 0750 ${dataDir}`,
      // A self-update renames the bundle and deletes the older backup: the account must own the folder holding them.
      ...('bundleRoot' in o.exec ? [`  chown -R ${user}:${user} ${dirname(o.exec.bundleRoot)}`] : []),
      // Root-only: it may hold SERVICE_ADMIN_PASSWORD or a database URL (systemd reads it before dropping privileges).
      `  install -d ${dirname(ENV_FILE)} && { [ -e ${ENV_FILE} ] || install -m 0600 /dev/null ${ENV_FILE}; }`,
      `  systemctl daemon-reload && systemctl enable --now ${basename(file, '.service')}`,
    ].join('\n'),
  );
  return 0;
}
