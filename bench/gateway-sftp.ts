/**
 * The SFTP gateway against OpenSSH, same run, interleaved, medians:
 *   1. first, on the fresh service: SESSIONS signed-in SFTP sessions held
 *      open at once, the service's RSS growth. Target: < 100 MB.
 *   2. upload (`put`) and download (`get`) of a 1 GiB file with OpenSSH's
 *      `sftp -b` client at its defaults (cipher, -B buffer, -R requests in
 *      flight: what a user gets), to and from the gateway and OpenSSH's own
 *      sftp-server (a loopback sshd started here, `internal-sftp`), in
 *      interleaved pairs, both signed in with the same ed25519 key (each
 *      side's sign-in time, and the gateway's by password, printed apart:
 *      a fixed cost inside every transfer's time). Each transfer's server CPU
 *      from /proc: the service, or sshd with the session processes it
 *      reaped. Targets: upload >= 0.8x OpenSSH, download >= 1.0x.
 *   3. idle: the service's CPU time over IDLE_S seconds with no client and
 *      with one signed-in idle session. Target: zero.
 * Runs the built service (`dist/`, built first). SFTP_PROFILE=<dir> runs the
 * service with --cpu-prof and prints its main thread's hot functions during
 * the gateway's transfers (the idle part is then skipped); SFTP_CIPHER=<name>
 * makes both sides use that cipher.
 *
 *   npm run bench -- gateway-sftp        (BENCH_RUNS=3, BENCH_MIB=1024, IDLE_S=5, SESSIONS=100)
 */
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { cpus, loadavg } from 'node:os';
import { startSshd, type SshdServer } from '../test/helpers/sshd';
import { sshConnect, type Ssh } from '../test/helpers/sftp-clients';
import { ensureBuilt, freePort, latestMainProfile, median, monotonicUs, noise, profileSummary, sleep, startService, table } from './lib';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BYTES = Number(process.env.BENCH_MIB ?? 1024) * MiB;
const IDLE_S = Number(process.env.IDLE_S ?? 5);
const SESSIONS = Number(process.env.SESSIONS ?? 100);
const PROFILE = process.env.SFTP_PROFILE;
/** One cipher for both sides (`-c`), e.g. aes128-gcm@openssh.com; default: what the client and each server negotiate. */
const CIPHER = process.env.SFTP_CIPHER;
const ADMIN = { email: 'bench@example.test', password: 'bench-password-1' };

/** Seconds for `sftp -b` to run `command` (a `get` or a `put`). */
function sftpRun(port: number, command: string, auth: { key: string; user: string } | { password: string; user: string }): Promise<number> {
  const args = [
    '-q',
    ...(CIPHER ? ['-c', CIPHER] : []),
    '-b',
    '-',
    '-P',
    String(port),
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'LogLevel=ERROR',
    '-o',
    `User=${auth.user}`,
  ];
  const cmd =
    'key' in auth
      ? ['sftp', ...args, '-i', auth.key, '127.0.0.1']
      : ['sshpass', '-e', 'sftp', '-o', 'BatchMode=no', '-o', 'PubkeyAuthentication=no', ...args, '127.0.0.1'];
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const p = spawn(cmd[0], cmd.slice(1), { stdio: ['pipe', 'ignore', 'inherit'], env: { ...process.env, SSHPASS: 'password' in auth ? auth.password : '' } });
    p.stdin.end(`${command}\n`);
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e9) : reject(new Error(`sftp exited ${code}`))));
  });
}

/** CPU seconds of `pid` (user + system), with its reaped children's when `children`. */
const cpuSeconds = (pid: number, children = false) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) / 100;
};

async function main(): Promise<void> {
  ensureBuilt();
  const sshd: SshdServer = await startSshd();
  const sftpPort = await freePort();
  const svc = await startService(
    { SERVICE_SFTP_LISTEN: `127.0.0.1:${sftpPort}`, SERVICE_ADMIN_EMAIL: ADMIN.email, SERVICE_ADMIN_PASSWORD: ADMIN.password },
    PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : [],
  );
  let stopped = false;
  const sessions: Ssh[] = [];
  try {
    const dir = join(sshd.dataDir, 'bench');
    mkdirSync(dir);
    await pipeline(noise(BYTES), createWriteStream(join(dir, 'big.bin')));
    const token = (
      await (await fetch(`${svc.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()
    ).token;
    const st = await fetch(`${svc.url}/api/admin/storages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'Bench', driver: 'local', config: { path: dir }, sync_interval: '24h' }),
    });
    if (!st.ok) throw new Error(await st.text());
    const key = await fetch(`${svc.url}/api/auth/ssh-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ public_key: readFileSync(`${sshd.clientKeyPath}.pub`, 'utf8').trim() }),
    });
    if (!key.ok) throw new Error(await key.text());
    // Sessions first, on a fresh service: after a 1 GiB transfer the heap has room to spare and would hide their cost.
    await sleep(500);
    const rss0 = svc.rssMb();
    for (let i = 0; i < SESSIONS; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, SESSIONS - i) }, () => sshConnect(sftpPort, { username: ADMIN.email, password: ADMIN.password })),
      );
      await Promise.all(batch.map((x) => x.sftp()));
      sessions.push(...batch);
    }
    await sleep(1000);
    const rss1 = svc.rssMb();
    const open = (await (await fetch(`${svc.url}/api/admin/gateways`, { headers: { authorization: `Bearer ${token}` } })).json()).sessions.filter(
      (x: { protocol: string }) => x.protocol === 'sftp',
    ).length;
    console.log(
      `${SESSIONS} open SFTP sessions (admin status counts ${open}): RSS ${rss0.toFixed(0)} → ${rss1.toFixed(0)} MB, +${(rss1 - rss0).toFixed(0)} MB (target < 100 MB) ${rss1 - rss0 < 100 ? 'PASS' : 'FAIL'}`,
    );
    for (const x of sessions.splice(0)) x.end();
    // Warm the page cache so both servers read from memory.
    execFileSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', join(dir, 'big.bin')]);
    const anchor = { key: sshd.clientKeyPath, user: sshd.user };
    const gw = { key: sshd.clientKeyPath, user: ADMIN.email };
    const sshdPid = Number(execFileSync('pgrep', ['-of', join(sshd.dir, 'sshd_config')], { encoding: 'utf8' }).trim());
    // Sign-in alone (a batch of one `pwd`): the fixed cost every transfer below carries.
    const signIns: Record<string, number[]> = { 'OpenSSH, key': [], 'gateway, key': [], 'gateway, password': [] };
    for (let i = 0; i < 3; i++) {
      signIns['OpenSSH, key'].push(await sftpRun(sshd.port, 'pwd', anchor));
      signIns['gateway, key'].push(await sftpRun(sftpPort, 'pwd', gw));
      signIns['gateway, password'].push(await sftpRun(sftpPort, 'pwd', { password: ADMIN.password, user: ADMIN.email }));
    }
    console.log(
      `sign-in and one request, medians of 3: ${Object.entries(signIns)
        .map(([k, xs]) => `${k} ${(median(xs) * 1000).toFixed(0)} ms`)
        .join(', ')}`,
    );
    // What a user gets: the client's default cipher, buffer size (-B) and requests in flight (-R); each pair interleaved.
    const rows: Record<string, { s: number[]; cpu: number[] }> = {};
    for (const k of ['upload, OpenSSH sftp-server', 'upload, gateway', 'download, OpenSSH sftp-server', 'download, gateway']) rows[k] = { s: [], cpu: [] };
    const load0 = loadavg()[0];
    const windows: Array<[number, number]> = [];
    /** Runs `command` against one side; records its seconds and that server's CPU seconds. */
    const measure = async (row: string, command: string) => {
      const gateway = row.endsWith('gateway');
      const cpu = () => (gateway ? cpuSeconds(svc.proc.pid!) : cpuSeconds(sshdPid, true));
      const c0 = cpu();
      const t0 = monotonicUs();
      rows[row].s.push(await sftpRun(gateway ? sftpPort : sshd.port, command, gateway ? gw : anchor));
      if (gateway) windows.push([t0, monotonicUs()]);
      // sshd reaps the session process just after the client exits.
      if (!gateway) await sleep(200);
      rows[row].cpu.push(cpu() - c0);
    };
    for (let i = 0; i < RUNS; i++) {
      await measure('upload, OpenSSH sftp-server', `put ${join(dir, 'big.bin')} ${join(dir, `up-a${i}.bin`)}`);
      rmSync(join(dir, `up-a${i}.bin`));
      await measure('upload, gateway', `put ${join(dir, 'big.bin')} /Bench/up-g${i}.bin`);
      rmSync(join(dir, `up-g${i}.bin`));
      await measure('download, OpenSSH sftp-server', `get ${join(dir, 'big.bin')} /dev/null`);
      await measure('download, gateway', 'get /Bench/big.bin /dev/null');
    }
    const mbps = (sec: number) => Math.round(BYTES / sec / 1e6);
    table(
      `SFTP transfers of ${BYTES / MiB} MiB with OpenSSH's sftp client (defaults) over loopback, ${RUNS} interleaved runs (load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`,
      Object.entries(rows).map(([server, xs]) => ({
        server,
        'median s': median(xs.s).toFixed(2),
        'MB/s': mbps(median(xs.s)),
        runs: xs.s.map((x) => x.toFixed(2)).join(' '),
        'server CPU s': median(xs.cpu).toFixed(2),
      })),
    );
    const ratio = (what: string) => median(rows[`${what}, OpenSSH sftp-server`].s) / median(rows[`${what}, gateway`].s);
    console.log(`\nupload gateway / OpenSSH: ${ratio('upload').toFixed(2)}x (target >= 0.8x) ${ratio('upload') >= 0.8 ? 'PASS' : 'FAIL'}`);
    console.log(`download gateway / OpenSSH: ${ratio('download').toFixed(2)}x (target >= 1.0x) ${ratio('download') >= 1 ? 'PASS' : 'FAIL'}`);
    if (PROFILE) {
      await svc.stop();
      stopped = true;
      const prof = latestMainProfile(PROFILE);
      if (prof) table("the service's main thread during the gateway transfers (self time)", profileSummary(prof, 20, windows));
    }
    if (stopped) return;

    await sleep(1000);
    let c0 = cpuSeconds(svc.proc.pid!);
    await sleep(IDLE_S * 1000);
    const idleNone = cpuSeconds(svc.proc.pid!) - c0;
    const one = await sshConnect(sftpPort, { username: ADMIN.email, password: ADMIN.password });
    await one.sftp();
    await sleep(500);
    c0 = cpuSeconds(svc.proc.pid!);
    await sleep(IDLE_S * 1000);
    const idleOne = cpuSeconds(svc.proc.pid!) - c0;
    one.end();
    console.log(
      `idle CPU over ${IDLE_S} s: ${idleNone.toFixed(2)} s with no client, ${idleOne.toFixed(2)} s with one idle session (target 0; the clock ticks in 0.01 s)`,
    );
  } finally {
    for (const x of sessions) x.end();
    if (!stopped) await svc.stop();
    await sshd.dispose();
  }
}

await main();
