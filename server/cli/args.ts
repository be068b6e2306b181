/** Argument parsing shared by the subcommands (node:util parseArgs with help text). */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, usage: string) {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage.trim() + '\n');
    process.exit(0);
  }
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n\n${usage.trim()}`);
  }
}
