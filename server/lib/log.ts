/**
 * The server's logger, on `pino`: one JSON line per record (the host pipes
 * them to a file), secrets redacted, and pretty lines when stdout is a
 * terminal and `pino-pretty` (a dev dependency, absent from the headless
 * bundle) can be loaded. The `Logger` interface stays the small one every
 * module already uses: a sentence and, optionally, the error or detail
 * object behind it.
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger as Pino } from 'pino';

export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, err?: unknown): void;
  info(msg: string, err?: unknown): void;
  warn(msg: string, err?: unknown): void;
  error(msg: string, err?: unknown): void;
}

/** Field names whose values never reach a log line, at any of the first three levels of a detail object. */
export const SECRET_KEYS = [
  'password',
  'pass',
  'passwd',
  'token',
  'access_token',
  'refresh_token',
  'secret',
  'client_secret',
  'api_key',
  'apikey',
  'key',
  'pin',
  'cookie',
  'set-cookie',
  'authorization',
  'x-service-pin',
  'secret_access_key',
  'private_key',
  'passphrase',
];
const REDACT_PATHS = SECRET_KEYS.flatMap((k) => {
  const key = /^[a-z_]+$/.test(k) ? k : `["${k}"]`;
  const at = (prefix: string) => (key.startsWith('[') ? `${prefix}${key}` : `${prefix}.${key}`);
  return [at('detail'), at('detail.*'), at('detail.*.*'), at('err'), at('err.*')];
});
/** `password=…`, `token: …`, `Bearer …` inside a sentence (URLs, command lines, backend messages). */
const SECRET_IN_TEXT = /\b(bearer\s+|(?:password|passwd|pass|token|secret|api_key|apikey|pin|authorization|cookie)\s*[=:]\s*)("[^"]*"|[^\s&;,"']+)/gi;

/** `scheme://user:password@host`. */
const URL_CREDENTIALS = /(\/\/[^/\s:@]+:)[^@\s/]+@/g;

/** Removes secrets written into a sentence. */
export function scrub(text: string): string {
  return text.replace(SECRET_IN_TEXT, (_m, head: string) => `${head}[redacted]`).replace(URL_CREDENTIALS, '$1[redacted]@');
}

/**
 * A logger at `level`. `destination` receives the JSON lines (tests pass
 * one); without it, stdout, pretty-printed when stdout is a terminal.
 */
export function createLogger(level: Level = 'info', destination?: DestinationStream): Logger {
  const p = pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
    },
    destination ?? defaultDestination(),
  );
  return { debug: at(p, 'debug'), info: at(p, 'info'), warn: at(p, 'warn'), error: at(p, 'error') };
}

function at(p: Pino, level: Level): (msg: string, err?: unknown) => void {
  return (msg, err) => {
    if (!p.isLevelEnabled(level)) return;
    if (err === undefined) return p[level](scrub(msg));
    if (err instanceof Error) return p[level]({ err: scrubError(err) }, scrub(msg));
    p[level]({ detail: typeof err === 'string' ? scrub(err) : err }, scrub(msg));
  };
}

/** The error with secrets scrubbed from its message and stack (a backend may echo a URL with credentials). */
function scrubError(e: Error): Error {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(e) as object) as Error, e);
  copy.message = scrub(e.message);
  if (e.stack) copy.stack = scrub(e.stack);
  return copy;
}

/**
 * debug/info on stdout, warn/error on stderr (CLI warnings are read there);
 * each pretty when that stream is a terminal and pino-pretty is installed,
 * JSON lines otherwise.
 */
function defaultDestination(): DestinationStream {
  const to = (fd: 1 | 2, tty: boolean | undefined): DestinationStream => {
    if (tty) {
      try {
        const pretty = createRequire(import.meta.url)('pino-pretty') as (o: object) => DestinationStream;
        return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', destination: fd, sync: true });
      } catch {
        // Not installed (the headless bundle has no dev dependencies): JSON lines it is.
      }
    }
    return pino.destination({ dest: fd, sync: true });
  };
  return pino.multistream(
    [
      { level: 'debug', stream: to(1, process.stdout.isTTY) },
      { level: 'warn', stream: to(2, process.stderr.isTTY) },
    ],
    { dedupe: true },
  );
}
