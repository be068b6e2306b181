/**
 * ClamAV for tests without ClamAV's downloaded databases: a signature
 * database holding only the EICAR test signature, and clamd on a loopback
 * TCP port using it. Stop clamd by its PID in `after`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './tools';
import { stopChild } from './servers';

/** The industry-standard harmless test file (68 bytes). */
export const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*', 'latin1');
/** How ClamAV names a match of our hand-made `.ndb` signature. */
export const EICAR_SIGNATURE = 'Eicar-Test-Signature.UNOFFICIAL';

/** Writes `<dir>/db/eicar.ndb` and returns the database folder (for `clamscan -d` and clamd). */
export function eicarDatabase(dir: string): string {
  const db = join(dir, 'db');
  mkdirSync(db, { recursive: true });
  writeFileSync(join(db, 'eicar.ndb'), `Eicar-Test-Signature:0:*:${EICAR.toString('hex')}\n`);
  return db;
}

export interface Clamd {
  address: string;
  port: number;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Starts clamd in the foreground on 127.0.0.1:<free port> with the EICAR database; resolves once it answers PING. */
export async function startClamd(dir: string, o: { streamMaxLength?: string } = {}): Promise<Clamd> {
  const db = eicarDatabase(dir);
  const port = await freePort();
  const conf = join(dir, 'clamd.conf');
  writeFileSync(
    conf,
    [
      `TCPSocket ${port}`,
      'TCPAddr 127.0.0.1',
      `DatabaseDirectory ${db}`,
      'Foreground yes',
      `PidFile ${join(dir, 'clamd.pid')}`,
      `StreamMaxLength ${o.streamMaxLength ?? '20M'}`,
      'MaxThreads 4',
      '',
    ].join('\n'),
  );
  const proc = spawn('clamd', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (c) => (stderr += c));
  const end = Date.now() + 15_000;
  while (!(await ping(port))) {
    if (proc.exitCode !== null || Date.now() > end) {
      proc.kill('SIGKILL');
      throw new Error(`clamd did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address: `127.0.0.1:${port}`,
    port,
    proc,
    stop: () => stopChild(proc),
  };
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.setTimeout(1000, () => (s.destroy(), resolve(false)));
    s.on('error', () => resolve(false));
    s.on('connect', () => s.write('zPING\0'));
    s.on('data', (c) => {
      got += c;
      if (got.includes('\0')) {
        s.destroy();
        resolve(got.startsWith('PONG'));
      }
    });
  });
}
