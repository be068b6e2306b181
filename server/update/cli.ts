/**
 * `service self-update [--check] [--to <version>]` (spec, Versioning 9). The
 * CLI module parses nothing else: it builds the updater and hands over argv.
 */
import { isAppError } from '../errors';
import type { Updater, UpdateStatus } from './types';

export interface SelfUpdateCliDeps {
  updater: Updater;
  /** Writes one line for the operator (stdout). */
  out(line: string): void;
}

const USAGE = 'usage: service self-update [--check] [--to <version>]';

function describe(s: UpdateStatus): string[] {
  const lines = [`running ${s.current_version} (${s.install_mode}, channel ${s.channel}, policy ${s.policy})`];
  if (!s.check_enabled) lines.push('update checks are off (SERVICE_UPDATE_CHECK=0 or no SERVICE_UPDATE_MANIFEST_URL): no request was made');
  if (s.last_error) lines.push(`last error (${s.last_error.reason}): ${s.last_error.message}`);
  if (s.latest) lines.push(`available: ${s.latest.version} (${s.latest.kind}, ${s.latest.severity})${s.latest.notes_url ? ` ${s.latest.notes_url}` : ''}`);
  else if (s.check_enabled && !s.last_error) lines.push('up to date');
  if (s.instructions) lines.push(s.instructions);
  return lines;
}

/**
 * Runs the command; resolves with the exit code: 0 done (or nothing to do),
 * 1 refused or failed (the reason is printed), 2 bad usage.
 */
export async function selfUpdateCli(argv: string[], deps: SelfUpdateCliDeps): Promise<number> {
  let checkOnly = false;
  let to: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--check') checkOnly = true;
    else if (a === '--to' && argv[i + 1] && !argv[i + 1].startsWith('--')) to = argv[++i];
    else if (a.startsWith('--to=')) to = a.slice(5);
    else {
      deps.out(USAGE);
      return 2;
    }
  }
  if (checkOnly && to !== undefined) {
    deps.out(USAGE);
    return 2;
  }
  const status = await deps.updater.check();
  if (checkOnly) {
    describe(status).forEach(deps.out);
    return status.last_error ? 1 : 0;
  }
  if (to === undefined && status.check_enabled && !status.last_error && status.latest === null) {
    describe(status).forEach(deps.out);
    return 0;
  }
  try {
    const r = await deps.updater.apply(to);
    deps.out(`upgraded ${r.from} -> ${r.to}`);
    deps.out(r.restart_required ? 'restart required: restart the service to run the new version' : 'the service is restarting');
    return 0;
  } catch (e) {
    if (!isAppError(e)) throw e;
    deps.out(`not upgraded (${String(e.params.reason ?? e.code)}): ${String(e.details?.message ?? e.message)}`);
    return 1;
  }
}
