import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairPagePath, toMenuTemplate, trayIcon, trayMenu, trayTooltip } from './tray-menu';
import type { TrayCommand, TrayEntry, TrayState } from './types';

const base = (over: Partial<TrayState> = {}): TrayState => ({
  server: { status: 'running', port: 5212, url: 'http://127.0.0.1:5212', recentCrashes: 0 },
  settings: { lanAccess: true, startAtLogin: false, publicUrl: '' },
  lanUrl: 'http://192.168.1.20:5212',
  activity: { transfers: 0, ops: 0, syncing: false },
  paused: false,
  keepingAwake: false,
  update: { state: 'idle' },
  ...over,
});
const labels = (m: TrayEntry[]) => m.filter((e) => e.kind === 'label').map((e) => (e as { label: string }).label);
const entry = (m: TrayEntry[], c: TrayCommand) => m.find((e) => 'command' in e && e.command === c) as Extract<TrayEntry, { command: TrayCommand }> | undefined;

test('running: status, LAN address, every action enabled, no public link entry without a public URL', () => {
  const m = trayMenu(base());
  assert.deepEqual(labels(m), ['Filedock is running', 'On your network: http://192.168.1.20:5212']);
  for (const c of [
    'open-window',
    'open-browser',
    'copy-lan-url',
    'show-qr',
    'pair-phone',
    'toggle-pause',
    'toggle-lan-access',
    'check-updates',
    'open-data-folder',
    'open-logs',
    'quit',
  ] as const)
    assert.equal(entry(m, c)?.enabled, true, c);
  assert.equal(entry(m, 'copy-public-url'), undefined);
  assert.equal(entry(m, 'restart-server'), undefined);
  assert.equal(trayIcon(base()), 'running');
});

test('starting: window and browser entries are disabled until the server is ready', () => {
  const m = trayMenu(base({ server: { status: 'starting', recentCrashes: 0 } }));
  assert.equal(labels(m)[0], 'Filedock is starting…');
  assert.equal(entry(m, 'open-window')?.enabled, false);
  assert.equal(entry(m, 'open-browser')?.enabled, false);
  assert.equal(entry(m, 'toggle-pause')?.enabled, false);
  assert.equal(entry(m, 'quit')?.enabled, true);
  assert.equal(trayIcon(base({ server: { status: 'starting', recentCrashes: 0 } })), 'idle');
});

test('error: the breaker reason is shown with a retry entry and the error icon', () => {
  const s = base({ server: { status: 'error', error: 'the server exited unexpectedly (code 1); stopped after 5 crashes', recentCrashes: 5 } });
  const m = trayMenu(s);
  assert.match(labels(m)[0], /not running: .*stopped after 5 crashes/);
  assert.equal(entry(m, 'restart-server')?.enabled, true);
  assert.equal(entry(m, 'open-window')?.enabled, false);
  assert.equal(trayIcon(s), 'error');
});

test('backoff: the countdown is in the status line', () => {
  const m = trayMenu(base({ server: { status: 'backoff', restartInMs: 4000, recentCrashes: 3 } }));
  assert.equal(labels(m)[0], 'Filedock stopped unexpectedly; restarting in 4 s');
});

test('LAN access off: loopback-only line and no LAN/QR entries; the toggle is unchecked', () => {
  const m = trayMenu(base({ lanUrl: null, settings: { lanAccess: false, startAtLogin: true, publicUrl: '' } }));
  assert.equal(labels(m)[1], 'This computer only (LAN access off)');
  assert.equal(entry(m, 'copy-lan-url'), undefined);
  assert.equal(entry(m, 'show-qr'), undefined);
  assert.deepEqual(entry(m, 'toggle-lan-access'), {
    kind: 'toggle',
    command: 'toggle-lan-access',
    label: 'LAN access (other devices can connect)',
    checked: false,
    enabled: true,
  });
  assert.equal((entry(m, 'toggle-start-at-login') as { checked: boolean }).checked, true);
});

test('public URL set: copy public link address appears', () => {
  const m = trayMenu(base({ settings: { lanAccess: true, startAtLogin: false, publicUrl: 'https://x.trycloudflare.com' } }));
  assert.equal(entry(m, 'copy-public-url')?.enabled, true);
});

test('activity: sync and transfers are listed, the keep-awake line names why, quit warns', () => {
  const awakeReasons = [
    { kind: 'transfers', count: 2 },
    { kind: 'files.transfer', count: 1 },
  ];
  const s = base({ activity: { transfers: 2, ops: 1, syncing: true }, keepingAwake: true, awakeReasons, paused: true });
  const m = trayMenu(s);
  assert.deepEqual(labels(m), [
    'Filedock is running (background work paused)',
    'On your network: http://192.168.1.20:5212',
    'syncing, 2 transfers, 1 operation',
    'Keeping the computer awake: 2 transfers, 1 copy or move',
  ]);
  assert.ok(!labels(trayMenu({ ...s, keepingAwake: false })).some((l) => l.startsWith('Keeping')), 'no line while the inhibitor is not held');
  assert.equal((entry(m, 'toggle-pause') as { checked: boolean }).checked, true);
  assert.equal(entry(m, 'quit')?.label, 'Quit (waits for transfers)');
  assert.equal(trayIcon(s), 'busy');
  assert.match(trayTooltip(s), /192\.168\.1\.20/);
});

test('update states map to one entry each', () => {
  const at = (update: TrayState['update']) => {
    const m = trayMenu(base({ update }));
    return entry(m, 'install-update') ?? entry(m, 'check-updates');
  };
  assert.deepEqual(at({ state: 'idle' }), { kind: 'command', command: 'check-updates', label: 'Check for updates', enabled: true });
  assert.equal(at({ state: 'checking' })?.enabled, false);
  assert.equal(at({ state: 'downloading', version: '1.2.0' })?.label, 'Downloading update 1.2.0…');
  assert.deepEqual(at({ state: 'downloaded', version: '1.2.0' }), {
    kind: 'command',
    command: 'install-update',
    label: 'Restart to update to 1.2.0',
    enabled: true,
  });
  assert.equal(at({ state: 'installing' })?.enabled, false);
  assert.deepEqual(at({ state: 'waiting', version: '1.2.0' }), {
    kind: 'command',
    command: 'install-update',
    label: 'Update to 1.2.0 when the running work ends',
    enabled: false,
  });
  assert.match(at({ state: 'error', error: 'x' })!.label, /failed/);
  assert.match(at({ state: 'not-available' })!.label, /up to date/);
});

test('the Electron template keeps labels, disables status lines and routes clicks to commands', () => {
  const ran: TrayCommand[] = [];
  const t = toMenuTemplate(trayMenu(base()), (c) => ran.push(c));
  assert.deepEqual(t[0], { label: 'Filedock is running', enabled: false });
  const lan = t.find((i) => i.label?.startsWith('LAN access'))!;
  assert.equal(lan.type, 'checkbox');
  assert.equal(lan.checked, true);
  (lan.click as () => void)();
  (t.at(-1)!.click as () => void)();
  assert.deepEqual(ran, ['toggle-lan-access', 'quit']);
});

test('"Pair a phone…" only while the server runs and a LAN address exists; it opens the pairing section told that address', () => {
  const running = trayMenu(base());
  assert.deepEqual(entry(running, 'pair-phone'), { kind: 'command', command: 'pair-phone', label: 'Pair a phone…', enabled: true });
  assert.equal(
    entry(trayMenu(base({ lanUrl: null, settings: { lanAccess: false, startAtLogin: false, publicUrl: '' } })), 'pair-phone'),
    undefined,
    'no LAN address',
  );
  for (const status of ['starting', 'stopped', 'error', 'backoff'] as const)
    assert.equal(entry(trayMenu(base({ server: { status, recentCrashes: 0 } })), 'pair-phone'), undefined, status);
  const path = pairPagePath('http://192.168.1.20:5212');
  assert.equal(path, '/account?pair=1&base=http%3A%2F%2F192.168.1.20%3A5212');
  const u = new URL(path, 'http://127.0.0.1:5212');
  assert.deepEqual([u.pathname, u.searchParams.get('pair'), u.searchParams.get('base')], ['/account', '1', 'http://192.168.1.20:5212']);
});

test('"Copy WebDAV address" only while the server runs with WebDAV on; it runs its command', () => {
  const m = trayMenu(base({ webdavUrl: 'http://localhost:5212/dav/' }));
  assert.deepEqual(entry(m, 'copy-webdav-url'), { kind: 'command', command: 'copy-webdav-url', label: 'Copy WebDAV address', enabled: true });
  assert.equal(entry(trayMenu(base({ webdavUrl: null })), 'copy-webdav-url'), undefined, 'WebDAV off');
  assert.equal(
    entry(trayMenu(base({ webdavUrl: 'http://localhost:5212/dav/', server: { status: 'stopped', recentCrashes: 0 } })), 'copy-webdav-url'),
    undefined,
  );
  const ran: TrayCommand[] = [];
  const item = toMenuTemplate(m, (c) => ran.push(c)).find((i) => i.label === 'Copy WebDAV address')!;
  (item.click as () => void)();
  assert.deepEqual(ran, ['copy-webdav-url']);
});

test('"Copy NFS address" only while the server runs with the NFS gateway on; it runs its command', () => {
  const m = trayMenu(base({ nfsUrl: 'nfs://192.168.1.20/?nfsport=2049&mountport=2049&version=3' }));
  assert.deepEqual(entry(m, 'copy-nfs-url'), { kind: 'command', command: 'copy-nfs-url', label: 'Copy NFS address', enabled: true });
  assert.equal(entry(trayMenu(base({ nfsUrl: null })), 'copy-nfs-url'), undefined, 'gateway off');
  assert.equal(
    entry(
      trayMenu(base({ nfsUrl: 'nfs://localhost/?nfsport=2049&mountport=2049&version=3', server: { status: 'stopped', recentCrashes: 0 } })),
      'copy-nfs-url',
    ),
    undefined,
  );
  const ran: TrayCommand[] = [];
  const item = toMenuTemplate(m, (c) => ran.push(c)).find((i) => i.label === 'Copy NFS address')!;
  (item.click as () => void)();
  assert.deepEqual(ran, ['copy-nfs-url']);
});

test('"Copy SFTP address" only while the server runs with the SFTP gateway on', () => {
  const m = trayMenu(base({ sftpUrl: 'sftp://localhost:2022/' }));
  assert.deepEqual(entry(m, 'copy-sftp-url'), { kind: 'command', command: 'copy-sftp-url', label: 'Copy SFTP address', enabled: true });
  assert.equal(entry(trayMenu(base({ sftpUrl: null })), 'copy-sftp-url'), undefined, 'gateway off');
  assert.equal(entry(trayMenu(base({ sftpUrl: 'sftp://localhost:2022/', server: { status: 'stopped', recentCrashes: 0 } })), 'copy-sftp-url'), undefined);
});

test('backups: "No backups set up" (neutral) when nothing is backed up; up to date; minutes behind; amber above the threshold', () => {
  const backup = (b: Partial<NonNullable<TrayState['backup']>>) => base({ backup: { linked: true, rpoS: 0, warn: false, unresolved: 0, ...b } });
  assert.deepEqual(labels(trayMenu(base())), ['Filedock is running', 'On your network: http://192.168.1.20:5212']);
  const none = backup({ linked: false });
  assert.equal(labels(trayMenu(none))[2], 'No backups set up', 'not linked: said so, not "up to date"');
  assert.equal(trayIcon(none), 'running', 'no backups is no warning');
  assert.equal(trayTooltip(none), 'Filedock is running\nhttp://192.168.1.20:5212');
  assert.equal(labels(trayMenu(backup({})))[2], 'Backups: up to date');
  assert.equal(labels(trayMenu(backup({ rpoS: 30 })))[2], 'Backups: less than a minute behind');
  assert.equal(labels(trayMenu(backup({ rpoS: 125, unresolved: 1 })))[2], 'Backups: 2 min behind · 1 failed copy');
  const amber = backup({ rpoS: 3 * 3600 + 5, warn: true, unresolved: 4 });
  assert.equal(labels(trayMenu(amber))[2], '⚠ Backups: 3 h behind · 4 failed copies');
  assert.equal(trayIcon(amber), 'warn');
  assert.equal(trayTooltip(amber), 'Filedock is running\nhttp://192.168.1.20:5212\n⚠ Backups: 3 h behind · 4 failed copies');
  assert.equal(trayIcon(backup({ rpoS: 125 })), 'running', 'behind but under the threshold: no amber');
  // A crashed server's last status is not shown as current.
  assert.equal(trayIcon({ ...amber, server: { status: 'error', error: 'x', recentCrashes: 5 } }), 'error');
  assert.equal(
    labels(trayMenu({ ...amber, server: { status: 'stopped', recentCrashes: 0 } })).some((l) => l.includes('Backups')),
    false,
  );
});

test('offline storages: one line each with why, amber icon, in the tooltip; none while the server is not running', () => {
  const s = base({
    offline: [
      { name: 'USB', reason: 'volume 1234 is not mounted', unplugged: true, foreign: false },
      { name: 'Stick', reason: 'x', unplugged: false, foreign: true },
      { name: 'NAS', reason: 'timed out', unplugged: false, foreign: false },
    ],
  });
  assert.deepEqual(labels(trayMenu(s)).slice(2), [
    '⚠ Offline: USB (drive unplugged)',
    '⚠ Offline: Stick (a different drive is in its place)',
    '⚠ Offline: NAS (cannot be reached)',
  ]);
  assert.equal(trayIcon(s), 'warn');
  assert.match(trayTooltip(s), /⚠ Offline: USB \(drive unplugged\)/);
  assert.equal(trayIcon(base({ offline: [] })), 'running');
  assert.equal(
    labels(trayMenu({ ...s, server: { status: 'stopped', recentCrashes: 0 } })).some((l) => l.includes('Offline')),
    false,
  );
});

test('the background line: lanes and CPU against the budget, why work is held, paused while asleep; none before a report', () => {
  const g = {
    lanes: 1,
    active: 1,
    cpu_percent: 40,
    budget_percent: 100,
    paused: false,
    pause_reasons: [] as Array<'user' | 'sleep'>,
    on_battery: true,
    user_idle: true,
  };
  assert.ok(labels(trayMenu(base({ governor: g }))).includes('Background: 1 of 1 lane · CPU 40 % of 100 % · on battery'));
  assert.ok(
    labels(trayMenu(base({ governor: { ...g, on_battery: false, user_idle: false } }))).includes('Background: 1 of 1 lane · CPU 40 % of 100 % · you are busy'),
  );
  assert.ok(
    labels(trayMenu(base({ governor: { ...g, lanes: 4, active: 2, on_battery: false, budget_percent: 0 } }))).includes('Background: 2 of 4 lanes · CPU 40 %'),
  );
  assert.ok(
    labels(trayMenu(base({ governor: { ...g, lanes: 0, paused: true, pause_reasons: ['sleep', 'user'] } }))).includes(
      'Background work: paused while the computer sleeps',
    ),
  );
  assert.ok(labels(trayMenu(base({ governor: { ...g, lanes: 0, paused: true, pause_reasons: ['user'] } }))).includes('Background work: paused'));
  assert.ok(!labels(trayMenu(base({ governor: null }))).some((l) => l.startsWith('Background')));
  assert.ok(
    !labels(trayMenu(base({ server: { status: 'starting', recentCrashes: 0 }, governor: g }))).some((l) => l.startsWith('Background')),
    'only while running',
  );
});

test('public links and request budgets: egress against the budget, suspended links, one line per budgeted storage; none before a report', () => {
  const u = {
    egress_mbps: 2.4,
    budget_mbps: 8,
    suspended_links: 1,
    budgets: [
      { name: 'S3', used_today: 120, budget_per_day: 1000, exhausted: false },
      { name: 'NAS', used_today: 500, budget_per_day: 500, exhausted: true },
    ],
  };
  assert.deepEqual(labels(trayMenu(base({ uplink: u }))).slice(2), [
    'Public links: 2.4 of 8 Mbit/s · ⚠ 1 link suspended',
    'Requests today: S3 120 of 1000',
    '⚠ Requests today: NAS 500 of 500 (sync waits for tomorrow)',
  ]);
  assert.deepEqual(labels(trayMenu(base({ uplink: { ...u, budget_mbps: 0, suspended_links: 0, budgets: [] } }))).slice(2), ['Public links: 2.4 Mbit/s']);
  assert.deepEqual(
    labels(trayMenu(base({ uplink: { egress_mbps: 0, budget_mbps: 0, suspended_links: 0, budgets: [] } }))).slice(2),
    [],
    'quiet and unbudgeted: no line',
  );
  assert.deepEqual(labels(trayMenu(base({ uplink: null }))).slice(2), []);
  assert.ok(
    !labels(trayMenu(base({ server: { status: 'stopped', recentCrashes: 0 }, uplink: u }))).some((l) => l.startsWith('Public links')),
    'only while running',
  );
});
