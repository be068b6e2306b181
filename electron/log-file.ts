/**
 * A size-rotated log file for the server's piped output: `server.log` grows to
 * `maxBytes`, then becomes `server.log.1` (older ones shift up) and at most
 * `keep` old files remain. Writes are synchronous so a crash loses nothing that
 * was already handed over; lines are small and the main process writes rarely.
 */
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export interface RotatingLogOptions {
  maxBytes?: number;
  keep?: number;
}

export class RotatingLog {
  readonly path: string;
  private readonly maxBytes: number;
  private readonly keep: number;
  private fd: number | null = null;
  private size = 0;

  constructor(path: string, { maxBytes = 5 * 1024 * 1024, keep = 3 }: RotatingLogOptions = {}) {
    this.path = path;
    this.maxBytes = maxBytes;
    this.keep = keep;
  }

  /** Appends `text` (a newline is added when missing); rotates first when the file is full. */
  write(text: string): void {
    const line = text.endsWith('\n') ? text : `${text}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.fd === null) this.open();
    if (this.size > 0 && this.size + bytes > this.maxBytes) this.rotate();
    writeSync(this.fd!, line);
    this.size += bytes;
  }

  /** Pipes a stream line by line, each line prefixed (`[server] ...`); ends with the stream. */
  pipe(stream: NodeJS.ReadableStream, prefix: string): void {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) this.write(`${prefix}${l}`);
    });
    stream.on('end', () => {
      if (rest) this.write(`${prefix}${rest}`);
    });
    // A child's pipe that breaks must not take the tray down with an unheard 'error'.
    stream.on('error', (e: Error) => this.write(`${prefix}(output stream failed: ${e.message})`));
  }

  /** Closes the file; a later write reopens it. Idempotent. */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private open(): void {
    mkdirSync(dirname(this.path), { recursive: true });
    this.fd = openSync(this.path, 'a', 0o600);
    this.size = statSync(this.path).size;
  }

  private rotate(): void {
    this.close();
    rmSync(`${this.path}.${this.keep}`, { force: true });
    for (let i = this.keep - 1; i >= 1; i--) if (existsSync(`${this.path}.${i}`)) renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    renameSync(this.path, `${this.path}.1`);
    this.open();
  }
}
