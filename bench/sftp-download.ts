/**
 * SFTP download throughput: the driver's `read` of a 1 GiB file drained to
 * /dev/null against OpenSSH's own `sftp -b` batch `get` of the same file from
 * the same loopback sshd, alternating, medians. Target: driver >= 60 % of
 * OpenSSH. Each client uses its default cipher (OpenSSH: chacha20-poly1305,
 * ssh2: aes128-gcm with AES-NI), so OpenSSH also runs with aes128-gcm and the
 * ratio is taken against the faster of its two. First, before anything has
 * grown the heap, a 1 GiB upload through `write` reports its peak RSS growth
 * (target: under 100 MB, i.e. memory flat).
 *
 *   node --import tsx bench/sftp-download.ts        (BENCH_RUNS=5, BENCH_MIB=1024)
 */
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createSftpDriver } from '../server/storage/drivers/sftp';
import { startSshd, type SshdServer } from '../test/helpers/sshd';
import { median, table, noise } from './lib';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const BYTES = Number(process.env.BENCH_MIB ?? 1024) * MiB;

async function driverDownload(server: SshdServer, root: string, stateDir: string): Promise<number> {
  const driver = await createSftpDriver({ host: server.host, port: server.port, user: server.user, private_key: server.clientKey, root }, stateDir);
  const t0 = process.hrtime.bigint();
  await pipeline(await driver.read('big.bin'), createWriteStream('/dev/null'));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  await driver.close();
  return s;
}

function opensshDownload(server: SshdServer, root: string, batch: string, cipher?: string): Promise<number> {
  writeFileSync(batch, `get ${join(root, 'big.bin')} /dev/null\n`);
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const p = spawn(
      'sftp',
      [
        '-q',
        ...(cipher ? ['-c', cipher] : []),
        '-b',
        batch,
        '-i',
        server.clientKeyPath,
        '-P',
        String(server.port),
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=ERROR',
        `${server.user}@${server.host}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e9) : reject(new Error(`sftp exited ${code}`))));
  });
}

async function uploadPeakRss(server: SshdServer, root: string, stateDir: string): Promise<{ seconds: number; growth: number }> {
  const driver = await createSftpDriver({ host: server.host, port: server.port, user: server.user, private_key: server.clientKey, root }, stateDir);
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  const t0 = process.hrtime.bigint();
  await driver.write('up.bin', noise(BYTES), { size: BYTES });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(timer);
  await driver.close();
  return { seconds, growth: Math.max(peak, process.memoryUsage.rss()) - base };
}

async function main(): Promise<void> {
  const server = await startSshd();
  const state = tempDir('filedock-bench-state-');
  try {
    const root = join(server.dataDir, 'bench');
    mkdirSync(root);
    const up = await uploadPeakRss(server, root, state.dir);
    const upload =
      `upload of ${BYTES / MiB} MiB: ${up.seconds.toFixed(2)} s, ${Math.round(BYTES / up.seconds / 1e6)} MB/s, ` +
      `peak RSS growth ${(up.growth / MiB).toFixed(0)} MiB (target < 100 MB) ${up.growth < 100e6 ? 'PASS' : 'FAIL'}`;

    await pipeline(noise(BYTES), createWriteStream(join(root, 'big.bin')));
    // Warm the page cache so every client reads from memory.
    execFileSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', join(root, 'big.bin')]);
    const batch = join(state.dir, 'batch');
    const driver: number[] = [];
    const openssh: number[] = [];
    const opensshGcm: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      openssh.push(await opensshDownload(server, root, batch));
      driver.push(await driverDownload(server, root, state.dir));
      opensshGcm.push(await opensshDownload(server, root, batch, 'aes128-gcm@openssh.com'));
    }
    const mbps = (sec: number) => Math.round(BYTES / sec / 1e6);
    const row = (client: string, xs: number[]) => ({
      client,
      'median s': median(xs).toFixed(2),
      'MB/s': mbps(median(xs)),
      runs: xs.map((x) => x.toFixed(2)).join(' '),
    });
    table(`SFTP download of ${BYTES / MiB} MiB over loopback, ${RUNS} alternating runs`, [
      row('OpenSSH sftp -b get', openssh),
      row('OpenSSH sftp -c aes128-gcm', opensshGcm),
      row('driver read', driver),
    ]);
    const ratio = Math.min(median(openssh), median(opensshGcm)) / median(driver);
    console.log(`\nratio driver / faster OpenSSH: ${(ratio * 100).toFixed(0)} % (target >= 60 %) ${ratio >= 0.6 ? 'PASS' : 'FAIL'}`);
    console.log(upload);
  } finally {
    await server.dispose();
    state.cleanup();
  }
}

await main();
