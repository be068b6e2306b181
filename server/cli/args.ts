/** Argument parsing shared by the subcommands (node:util parseArgs with help text). */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, usage: string) {
  helpIfAsked(argv, usage);
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n\n${usage.trim()}`);
  }
}

/** Prints `usage` and exits 0 when the command line asks for help anywhere. */
export function helpIfAsked(argv: string[], usage: string): void {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage.trim() + '\n');
    process.exit(0);
  }
}
