/**
 * The FTPS gateway idle and under load. First, on a fresh service: its CPU
 * over IDLE_S seconds with no session and with 100 signed-in idle TLS
 * sessions (target: the sessions add no ticks), and the RSS those sessions
 * add (target < 100 MB). Then against vsftpd (the anchor), both with
 * explicit TLS and PROT P, both driven by curl (`--ssl-reqd`, EPSV) on
 * loopback, alternating runs, medians: download and upload of one BENCH_MIB
 * file; and `lftp mirror -R` of BENCH_FILES small files (a data connection
 * and a TLS handshake per file; rclone fails TLS against vsftpd here).
 *
 *   npm run bench -- gateway-ftp        (BENCH_RUNS=3, BENCH_MIB=512, BENCH_FILES=200, IDLE_S=5)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { ensureBuilt, freePort, median, noise, sleep, startService, table } from './lib';
import { adminEnv, mount } from './download';
import { startVsftpd } from '../test/helpers/vsftpd';
import { RawFtp } from '../test/helpers/ftp-client';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BYTES = Number(process.env.BENCH_MIB ?? 512) * MiB;
const IDLE_S = Number(process.env.IDLE_S ?? 5);
const SESSIONS = 100;
const FILES = Number(process.env.BENCH_FILES ?? 200);

/** lftp's wall time to mirror `dir` up to an explicit-TLS FTP server (4 files at once), in seconds. */
function lftpMirror(dir: string, port: number, user: string, pass: string, to: string): number {
  const script = `set ftp:ssl-force true; set ftp:ssl-protect-data true; set ssl:verify-certificate no; set cmd:fail-exit true; open -u "${user}","${pass}" -p ${port} 127.0.0.1; mirror -R --parallel=4 ${dir} ${to}`;
  const t0 = performance.now();
  execFileSync('timeout', ['300', 'lftp', '-c', script], { stdio: 'ignore' });
  return (performance.now() - t0) / 1000;
}

/** curl's own time for one FTPS transfer, in seconds. */
function curlFtps(args: string[]): number {
  return Number(execFileSync('curl', ['-sS', '--ssl-reqd', '-k', '--fail', '-w', '%{time_total}', ...args], { encoding: 'utf8' }));
}

/** CPU ticks (user + system) of a process so far. */
function ticks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}

async function idleTicks(pid: number): Promise<number> {
  const t0 = ticks(pid);
  await sleep(IDLE_S * 1000);
  return ticks(pid) - t0;
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-ftp-');
  const ftpPort = await freePort();
  const svc = await startService({ ...adminEnv, SERVICE_FTP_LISTEN: `127.0.0.1:${ftpPort}` });
  const vs = await startVsftpd({ tls: 'explicit' });
  try {
    await mount(svc, 'Box', files.dir);
    const pid = svc.proc.pid!;
    await sleep(2000);
    const idleNone = await idleTicks(pid);
    const rss0 = svc.rssMb();
    const sessions: RawFtp[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const { ftp } = await RawFtp.connect(ftpPort);
      await ftp.secure();
      const r = await ftp.login(adminEnv.SERVICE_ADMIN_EMAIL, adminEnv.SERVICE_ADMIN_PASSWORD);
      if (r.code !== 230) throw new Error(`login ${r.code} ${r.text}`);
      sessions.push(ftp);
    }
    await sleep(1000);
    const rss1 = svc.rssMb();
    const idleMany = await idleTicks(pid);
    for (const f of sessions) f.kill();
    table('FTPS gateway idle', [
      { state: 'no session', 'CPU ticks': `${idleNone} in ${IDLE_S} s`, 'RSS MB': rss0.toFixed(0) },
      {
        state: `${SESSIONS} signed-in idle sessions (TLS)`,
        'CPU ticks': `${idleMany} in ${IDLE_S} s`,
        'RSS MB': `${rss1.toFixed(0)} (+${(rss1 - rss0).toFixed(1)})`,
      },
    ]);
    await pipeline(noise(BYTES), createWriteStream(join(files.dir, 'big.bin')));
    execFileSync('cp', [join(files.dir, 'big.bin'), join(vs.rootDir, 'pub/big.bin')]);
    const ours = { base: `ftp://127.0.0.1:${ftpPort}/Box`, user: `${adminEnv.SERVICE_ADMIN_EMAIL}:${adminEnv.SERVICE_ADMIN_PASSWORD}` };
    const theirs = { base: `ftp://127.0.0.1:${vs.port}/pub`, user: `${vs.user}:${vs.pass}` };
    const src = join(files.dir, 'big.bin');
    const down: Record<string, number[]> = { filedock: [], vsftpd: [] };
    const up: Record<string, number[]> = { filedock: [], vsftpd: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const [name, t] of [
        ['filedock', ours],
        ['vsftpd', theirs],
      ] as const) {
        down[name].push(BYTES / MiB / curlFtps(['-u', t.user, '-o', '/dev/null', `${t.base}/big.bin`]));
        up[name].push(BYTES / MiB / curlFtps(['-u', t.user, '-T', src, `${t.base}/up-${i}.bin`]));
      }
      rmSync(join(files.dir, `up-${i}.bin`), { force: true });
    }
    const small = join(files.dir, 'small');
    mkdirSync(small);
    for (let i = 0; i < FILES; i++) writeFileSync(join(small, `f${i}.txt`), `small file ${i}\n`.repeat(20));
    const many: Record<string, number[]> = { filedock: [], vsftpd: [] };
    for (let i = 0; i < RUNS; i++) {
      many.filedock.push(FILES / lftpMirror(small, ftpPort, adminEnv.SERVICE_ADMIN_EMAIL, adminEnv.SERVICE_ADMIN_PASSWORD, `Box/many-${i}`));
      many.vsftpd.push(FILES / lftpMirror(small, vs.port, vs.user, vs.pass, `pub/many-${i}`));
    }
    const rows = (label: string, r: Record<string, number[]>, unit = 'MiB/s') => ({
      transfer: label,
      filedock: `${median(r.filedock).toFixed(0)} ${unit}`,
      vsftpd: `${median(r.vsftpd).toFixed(0)} ${unit}`,
      ratio: `${((median(r.filedock) / median(r.vsftpd)) * 100).toFixed(0)} %`,
    });
    table(
      `FTPS ${BYTES / MiB} MiB with curl, ${FILES} files with lftp, medians of ${RUNS} (load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
      [rows('download (RETR)', down), rows('upload (STOR)', up), rows(`lftp mirror -R of ${FILES} small files`, many, 'files/s')],
    );
  } finally {
    await svc.stop();
    await vs.teardown();
    files.cleanup();
  }
}

await main();
