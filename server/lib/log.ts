/** Tiny leveled logger: one line per record on stdout/stderr (the host pipes it to a file). */
export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, err?: unknown): void;
  info(msg: string, err?: unknown): void;
  warn(msg: string, err?: unknown): void;
  error(msg: string, err?: unknown): void;
}

export function createLogger(level: Level = 'info', sink: (line: string, level: Level) => void = defaultSink): Logger {
  const min = ORDER[level];
  const at = (l: Level) => (msg: string, err?: unknown) => {
    if (ORDER[l] < min) return;
    const detail = err === undefined ? '' : ' ' + (err instanceof Error ? (l === 'error' || level === 'debug' ? err.stack ?? err.message : err.message) : String(err));
    sink(`${new Date().toISOString()} ${l.toUpperCase().padEnd(5)} ${msg}${detail}`, l);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function defaultSink(line: string, level: Level): void {
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(line + '\n');
}
