/**
 * The tray as a view of state: `trayMenu(state)` returns the whole menu for
 * the current state, and `main.ts` rebuilds the native menu from it whenever
 * something changes. Pure: no Electron, no clicks; entries name commands.
 */
import type { MenuItemConstructorOptions } from 'electron';
import { describeReasons } from './sleep-inhibitor';
import type { TrayEntry, TrayState, TrayCommand } from './types';

const cmd = (command: TrayCommand, label: string, enabled = true): TrayEntry => ({ kind: 'command', command, label, enabled });
const toggle = (command: TrayCommand, label: string, checked: boolean, enabled = true): TrayEntry => ({ kind: 'toggle', command, label, checked, enabled });
const sep: TrayEntry = { kind: 'separator' };

/** The status line: what the server is doing, in a few words. */
export function statusLine(s: TrayState): string {
  switch (s.server.status) {
    case 'running':
      return s.paused ? 'Filedock is running (background work paused)' : 'Filedock is running';
    case 'starting':
      return 'Filedock is starting…';
    case 'backoff':
      return `Filedock stopped unexpectedly; restarting in ${Math.ceil((s.server.restartInMs ?? 0) / 1000)} s`;
    case 'error':
      return `Filedock is not running: ${s.server.error ?? 'unknown error'}`;
    case 'stopping':
      return 'Filedock is stopping…';
    case 'stopped':
      return 'Filedock is stopped';
  }
}

/** The activity line, or null when nothing runs. */
export function activityLine(s: TrayState): string | null {
  const parts: string[] = [];
  if (s.activity.syncing) parts.push('syncing');
  if (s.activity.transfers) parts.push(`${s.activity.transfers} transfer${s.activity.transfers === 1 ? '' : 's'}`);
  if (s.activity.ops) parts.push(`${s.activity.ops} operation${s.activity.ops === 1 ? '' : 's'}`);
  return parts.length ? parts.join(', ') : null;
}

/** "Keeping the computer awake: 1 copy or move", or null while the sleep inhibitor is not held. */
export function awakeLine(s: TrayState): string | null {
  if (!s.keepingAwake) return null;
  const why = describeReasons(s.awakeReasons ?? []);
  return why ? `Keeping the computer awake: ${why}` : 'Keeping the computer awake';
}

/**
 * The backup line ("Backups: up to date" / "… N min behind"); "No backups set up" (neutral, never amber)
 * when no storage is backed up to an enabled target; null before the server's first status.
 */
export function backupLine(s: TrayState): string | null {
  const b = s.backup;
  if (!b) return null;
  if (!b.linked) return 'No backups set up';
  const behind =
    b.rpoS <= 0
      ? 'up to date'
      : b.rpoS < 60
        ? 'less than a minute behind'
        : b.rpoS < 7200
          ? `${Math.floor(b.rpoS / 60)} min behind`
          : `${Math.floor(b.rpoS / 3600)} h behind`;
  const failed = b.unresolved ? ` · ${b.unresolved} failed cop${b.unresolved === 1 ? 'y' : 'ies'}` : '';
  return `${b.warn ? '⚠ ' : ''}Backups: ${behind}${failed}`;
}

/** One line per offline storage ("⚠ Offline: USB (drive unplugged)"); empty when all are online. */
export function offlineLines(s: TrayState): string[] {
  return (s.offline ?? []).map(
    (o) => `⚠ Offline: ${o.name} (${o.foreign ? 'a different drive is in its place' : o.unplugged ? 'drive unplugged' : 'cannot be reached'})`,
  );
}

/**
 * The background line from the server's governor: lanes in use, CPU against
 * the budget, and why work is held ("Background: 1 of 1 lane · CPU 40 % of
 * 100 % · on battery"); null before its first report.
 */
export function governorLine(s: TrayState): string | null {
  const g = s.governor;
  if (!g) return null;
  if (g.paused) return g.pause_reasons.includes('sleep') ? 'Background work: paused while the computer sleeps' : 'Background work: paused';
  const cpu = g.budget_percent > 0 ? `CPU ${g.cpu_percent} % of ${g.budget_percent} %` : `CPU ${g.cpu_percent} %`;
  const why = g.on_battery ? ' · on battery' : !g.user_idle ? ' · you are busy' : '';
  return `Background: ${g.active} of ${g.lanes} lane${g.lanes === 1 ? '' : 's'} · ${cpu}${why}`;
}

/**
 * Public links and metered storages: egress against its budget with the
 * suspended links ("Public links: 2.4 of 8 Mbit/s · ⚠ 1 link suspended";
 * nothing while no budget is set and nothing is sent), then one line per
 * storage with a request budget ("Requests today: S3 120 of 1000").
 */
export function uplinkLines(s: TrayState): string[] {
  const u = s.uplink;
  if (!u) return [];
  const out: string[] = [];
  const suspended = u.suspended_links > 0 ? ` · ⚠ ${u.suspended_links} link${u.suspended_links === 1 ? '' : 's'} suspended` : '';
  if (u.budget_mbps > 0) out.push(`Public links: ${u.egress_mbps} of ${u.budget_mbps} Mbit/s${suspended}`);
  else if (u.egress_mbps > 0 || suspended) out.push(`Public links: ${u.egress_mbps} Mbit/s${suspended}`);
  for (const b of u.budgets)
    out.push(`${b.exhausted ? '⚠ ' : ''}Requests today: ${b.name} ${b.used_today} of ${b.budget_per_day}${b.exhausted ? ' (sync waits for tomorrow)' : ''}`);
  return out;
}

function updateEntry(s: TrayState): TrayEntry {
  switch (s.update.state) {
    case 'checking':
      return cmd('check-updates', 'Checking for updates…', false);
    case 'available':
    case 'downloading':
      return cmd('check-updates', s.update.version ? `Downloading update ${s.update.version}…` : 'Downloading update…', false);
    case 'downloaded':
      return cmd('install-update', `Restart to update to ${s.update.version ?? 'the new version'}`);
    case 'waiting':
      return cmd('install-update', `Update to ${s.update.version ?? 'the new version'} when the running work ends`, false);
    case 'installing':
      return cmd('install-update', 'Installing update…', false);
    case 'not-available':
      return cmd('check-updates', 'Check for updates (up to date)');
    case 'error':
      return cmd('check-updates', 'Check for updates (last check failed)');
    case 'idle':
      return cmd('check-updates', 'Check for updates');
  }
}

/** The full tray menu for `s`, top to bottom. */
export function trayMenu(s: TrayState): TrayEntry[] {
  const running = s.server.status === 'running';
  const menu: TrayEntry[] = [{ kind: 'label', label: statusLine(s) }];
  if (running) {
    menu.push({ kind: 'label', label: s.lanUrl ? `On your network: ${s.lanUrl}` : 'This computer only (LAN access off)' });
    const activity = activityLine(s);
    if (activity) menu.push({ kind: 'label', label: activity });
    const awake = awakeLine(s);
    if (awake) menu.push({ kind: 'label', label: awake });
    const backup = backupLine(s);
    if (backup) menu.push({ kind: 'label', label: backup });
    for (const line of offlineLines(s)) menu.push({ kind: 'label', label: line });
    const background = governorLine(s);
    if (background) menu.push({ kind: 'label', label: background });
    for (const line of uplinkLines(s)) menu.push({ kind: 'label', label: line });
  }
  if (s.server.status === 'error') menu.push(cmd('restart-server', 'Try again'));
  menu.push(sep, cmd('open-window', 'Open Filedock', running), cmd('open-browser', 'Open in browser', running));
  if (s.lanUrl) menu.push(cmd('copy-lan-url', 'Copy LAN address', running), cmd('show-qr', 'Show QR code for phones…', running));
  // Pairing needs a running server and an address a phone can reach.
  if (running && s.lanUrl) menu.push(cmd('pair-phone', 'Pair a phone…'));
  if (running && s.webdavUrl) menu.push(cmd('copy-webdav-url', 'Copy WebDAV address'));
  if (running && s.sftpUrl) menu.push(cmd('copy-sftp-url', 'Copy SFTP address'));
  if (running && s.nfsUrl) menu.push(cmd('copy-nfs-url', 'Copy NFS address'));
  if (s.settings.publicUrl) menu.push(cmd('copy-public-url', 'Copy public link address'));
  menu.push(
    cmd('public-links', 'Public links…', running),
    sep,
    toggle('toggle-pause', 'Pause background work', s.paused, running),
    toggle('toggle-start-at-login', 'Start at login', s.settings.startAtLogin),
    toggle('toggle-lan-access', 'LAN access (other devices can connect)', s.settings.lanAccess, s.server.status !== 'stopping'),
    sep,
    updateEntry(s),
    cmd('open-data-folder', 'Open data folder'),
    cmd('open-logs', 'Open logs'),
    sep,
    cmd('quit', s.activity.transfers ? 'Quit (waits for transfers)' : 'Quit Filedock'),
  );
  return menu;
}

/**
 * The page "Pair a phone…" opens in the app window: the pairing section of
 * Sessions & keys, told the LAN address so the QR code points the phone
 * there instead of at this computer's loopback address.
 */
export function pairPagePath(lanUrl: string): string {
  return `/account?pair=1&base=${encodeURIComponent(lanUrl)}`;
}

/** The tray icon's tooltip: the status line plus the address, the backup line when it warns, offline storages. */
export function trayTooltip(s: TrayState): string {
  const lines = [statusLine(s)];
  if (s.server.status === 'running' && s.lanUrl) lines.push(s.lanUrl);
  if (s.server.status === 'running' && s.backup?.linked && s.backup.warn) lines.push(backupLine(s)!);
  if (s.server.status === 'running') lines.push(...offlineLines(s));
  return lines.join('\n');
}

/** Which tray icon variant (resources/tray-<variant>.png) fits the state. */
export function trayIcon(s: TrayState): 'running' | 'busy' | 'warn' | 'error' | 'idle' {
  if (s.server.status === 'error' || s.server.status === 'backoff') return 'error';
  if (s.server.status !== 'running') return 'idle';
  // Amber: the backup is further behind than the server's threshold.
  if (s.backup?.linked && s.backup.warn) return 'warn';
  // Amber too: a storage is offline (its drive unplugged, or its backend unreachable).
  if (s.offline?.length) return 'warn';
  return activityLine(s) ? 'busy' : 'running';
}

/** The Electron menu template for `entries`; each click runs its command through `run`. */
export function toMenuTemplate(entries: TrayEntry[], run: (c: TrayCommand) => void): MenuItemConstructorOptions[] {
  return entries.map((e): MenuItemConstructorOptions => {
    switch (e.kind) {
      case 'label':
        return { label: e.label, enabled: false };
      case 'separator':
        return { type: 'separator' };
      case 'command':
        return { label: e.label, enabled: e.enabled, click: () => run(e.command) };
      case 'toggle':
        return { label: e.label, enabled: e.enabled, type: 'checkbox', checked: e.checked, click: () => run(e.command) };
    }
  });
}
