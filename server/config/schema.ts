/**
 * Every SERVICE_* setting in one table: its parser, default and meaning. The
 * README's configuration table is generated from this list
 * (`node --import tsx scripts/config-table.ts`), so the two never drift.
 */
import { parseDuration } from '../lib/duration';
import { parseAddressList } from '../lib/net-addr';

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };
type Parser<T> = (raw: string) => Parsed<T>;

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (reason: string): Parsed<never> => ({ ok: false, reason });

export const str: Parser<string> = (raw) => ok(raw);
export const int =
  (min = -Infinity, max = Infinity): Parser<number> =>
  (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) return bad('must be an integer');
    const n = Number(raw);
    return n < min || n > max ? bad(`must be between ${min} and ${max}`) : ok(n);
  };
/** An integer, or 0 when empty. */
export const intOrEmpty =
  (min: number, max: number): Parser<number> =>
  (raw) =>
    raw.trim() === '' ? ok(0) : int(min, max)(raw);
/** A comma list of addresses and CIDR ranges (lib/net-addr), kept as written. */
export const addressList: Parser<string> = (raw) => {
  const { bad: wrong } = parseAddressList(raw);
  return wrong === null ? ok(raw) : bad(`"${wrong}" is not an address, a CIDR range, loopback, private or none`);
};
export const bool: Parser<boolean> = (raw) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return ok(true);
  if (['0', 'false', 'no', 'off', ''].includes(v)) return ok(false);
  return bad('must be true/false or 1/0');
};
export const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw) =>
    (values as string[]).includes(raw.trim()) ? ok(raw.trim() as T) : bad(`must be one of ${values.join(', ')}`);
/** Duration in ms; a bare number is seconds. */
export const duration: Parser<number> = (raw) => {
  const ms = parseDuration(raw);
  return ms === null ? bad('must be a duration such as 90s, 15m, 24h, 7d') : ok(ms);
};
/** A duration in ms within [min, max], or 0 (off). */
export const durationOrOff =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    const d = duration(raw);
    if (!d.ok || d.value === 0 || (d.value >= min && d.value <= max)) return d;
    return bad(`must be 0 (off) or between ${min / 1000}s and ${max / 1000}s`);
  };
/** A duration in ms within [min, max]. */
export const durationIn =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    const d = duration(raw);
    if (!d.ok || (d.value >= min && d.value <= max)) return d;
    return bad(`must be between ${min / 1000}s and ${max / 1000}s`);
  };
export const url: Parser<string> = (raw) => {
  if (raw === '') return ok('');
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? ok(raw.replace(/\/+$/, '')) : bad('must be an http(s) URL');
  } catch {
    return bad('must be an http(s) URL');
  }
};
/** An http(s) URL kept exactly as written (an OIDC issuer must match the provider's byte for byte, trailing slash included). */
export const exactUrl: Parser<string> = (raw) => {
  if (raw === '') return ok('');
  const u = url(raw);
  return u.ok ? ok(raw.trim()) : u;
};
export const hostPort: Parser<string> = (raw) => (raw === '' || /^[\w.:[\]-]+:\d{1,5}$/.test(raw) ? ok(raw) : bad('must be host:port'));
/** `host:port`, or `:port` for every address. */
export const listenAt: Parser<string> = (raw) => (raw === '' || /^[\w.:[\]-]*:\d{1,5}$/.test(raw) ? ok(raw) : bad('must be host:port or :port'));
/** A PostgreSQL connection URL (`postgres://` or `postgresql://`), or empty. */
export const postgresUrl: Parser<string> = (raw) => {
  if (raw.trim() === '') return ok('');
  try {
    const u = new URL(raw.trim());
    return u.protocol === 'postgres:' || u.protocol === 'postgresql:' ? ok(raw.trim()) : bad('must be a postgres:// URL (empty = SQLite in the data folder)');
  } catch {
    return bad('must be a postgres:// URL (empty = SQLite in the data folder)');
  }
};
export const json: Parser<Record<string, unknown> | null> = (raw) => {
  if (raw.trim() === '') return ok(null);
  try {
    const v = JSON.parse(raw);
    return v && typeof v === 'object' && !Array.isArray(v) ? ok(v) : bad('must be a JSON object');
  } catch {
    return bad('must be one line of JSON');
  }
};

export interface Setting<T = unknown> {
  key: string;
  parse: Parser<T>;
  default: string;
  doc: string;
  secret?: boolean;
  /** The config file's dotted name when it is not the key's own (`external_services.docserver.url`). */
  file?: string;
}
const s = <T>(key: string, parse: Parser<T>, def: string, doc: string, secret = false, file?: string): Setting<T> => ({
  key,
  parse,
  default: def,
  doc,
  secret,
  file,
});

export const SETTINGS = {
  host: s('SERVICE_HOST', str, '0.0.0.0', 'Address the HTTP listener binds (use 127.0.0.1 to keep it on this machine).'),
  port: s('SERVICE_PORT', int(0, 65535), '5212', 'HTTP port; 0 picks a free port (printed at start).'),
  dataDir: s(
    'SERVICE_DATA_DIR',
    str,
    '',
    'Data folder: database, secret key, caches, upload staging, logs. Default: the OS user-data folder (Linux `~/.local/share/filedock`, macOS `~/Library/Application Support/Filedock`, Windows `%APPDATA%\\Filedock`).',
  ),
  databaseUrl: s(
    'SERVICE_DATABASE_URL',
    postgresUrl,
    '',
    'Catalogue database: empty = SQLite in the data folder; `postgres://user:pass@host:5432/db` = PostgreSQL (several instances may share it: docs/operations.md, "Several instances"; migrations run at start; see docs/postgresql.md for what is covered). `service db migrate-to <url>` copies an existing SQLite catalogue there. A URL that leads nowhere stops the start (exit 2).',
    true,
  ),
  databasePool: s(
    'SERVICE_DATABASE_POOL',
    intOrEmpty(1, 200),
    '',
    'PostgreSQL: the most connections one instance opens for its asynchronous statements (docs/postgresql.md, "The pool"). Empty = two per core, at least 4 and at most 16. Statements past 16 waiting per connection answer 503 `database_busy` at once.',
  ),
  passwordCost: s(
    'SERVICE_PASSWORD_COST',
    int(14, 20),
    '17',
    "Password hashing cost: scrypt with N = 2^cost, r=8, p=1 (17: OWASP's minimum, 128 MiB and ~0.7 s per hash on a small machine; each step up doubles both). At most two hashes run at once. Hashes made at another cost keep working; a weaker one is replaced at the person's next sign-in.",
  ),
  secretKeyFile: s(
    'SERVICE_SECRET_KEY_FILE',
    str,
    '',
    "The installation's secret key (32 random bytes, base64: `head -c 32 /dev/urandom | base64 > key`; mode 0600). Empty = `secret.key` in the data folder, created at first start. Several instances on one database need the same key: the database keeps a fingerprint of it and an instance with another key refuses to start (exit 2).",
  ),
  stagingDir: s(
    'SERVICE_STAGING_DIR',
    str,
    '',
    'Folder where chunked uploads are put together before they are published (storages without multipart, and local storages\' multipart sessions). Empty = `staging` in the data folder. Several instances: the same shared folder (e.g. an NFS mount) on every instance, so the chunks of one upload may reach any of them (docs/operations.md, "Several instances").',
  ),
  publicUrl: s('SERVICE_PUBLIC_URL', url, '', 'Public base URL used in share links (for example your tunnel address). Secure cookies when it is https.'),
  publicListen: s(
    'SERVICE_PUBLIC_LISTEN',
    hostPort,
    '',
    'Optional second listener (e.g. 127.0.0.1:5213) that serves only public link routes; point your tunnel at it.',
  ),
  config: s(
    'SERVICE_CONFIG',
    str,
    '',
    'Optional JSON or YAML config file; its keys are the same settings in lower case without the prefix, nested by `_` (e.g. `update: {channel: beta}`). Environment wins.',
  ),
  logLevel: s('SERVICE_LOG_LEVEL', oneOf('debug', 'info', 'warn', 'error'), 'info', 'Log verbosity.'),
  locale: s('SERVICE_LOCALE', oneOf('en', 'tr'), 'en', 'Default language for messages and public pages.'),
  adminEmail: s(
    'SERVICE_ADMIN_EMAIL',
    str,
    '',
    'First-run admin e-mail (with SERVICE_ADMIN_PASSWORD); otherwise a one-time setup page answers loopback clients.',
  ),
  adminPassword: s('SERVICE_ADMIN_PASSWORD', str, '', 'First-run admin password (at least 8 characters).', true),
  sessionTtl: s('SERVICE_SESSION_TTL', duration, '14d', 'Lifetime of a sign-in session (cookie and token); 0 means the default.'),
  loginMaxAttempts: s('SERVICE_LOGIN_MAX_ATTEMPTS', int(1, 100), '5', 'Wrong passwords per account (and per client address x2) before the lock.'),
  loginLock: s('SERVICE_LOGIN_LOCK', duration, '15m', 'How long a login lock lasts.'),
  allowSignup: s(
    'SERVICE_ALLOW_SIGNUP',
    bool,
    'false',
    'Seeds `allow_signup` once: anyone who reaches the sign-in page may create a `user` account (the admin console changes it later).',
  ),
  multiTenant: s(
    'SERVICE_MULTI_TENANT',
    bool,
    'false',
    'Multi-tenant mode (docs/tenants.md): a request selects its tenant by host name or `/t/<slug>/` prefix, and the platform operator manages tenants at `/api/platform/tenants`. Off: one tenant, nothing changes.',
  ),
  httpHeadersTimeout: s(
    'SERVICE_HTTP_HEADERS_TIMEOUT',
    duration,
    '20s',
    "How long a client may take to send a request's headers; slow-header (slowloris) sockets are closed after it (checked every second).",
  ),
  httpIdleTimeout: s(
    'SERVICE_HTTP_IDLE_TIMEOUT',
    duration,
    '60s',
    'Inactivity allowed while a request is open (no body byte received, no response byte taken); a steady upload or download of any length is never cut (0 = no limit).',
  ),
  httpKeepAliveTimeout: s(
    'SERVICE_HTTP_KEEPALIVE_TIMEOUT',
    duration,
    '65s',
    'How long an idle keep-alive connection stays open between requests (above the 60 s of common proxies and tunnels).',
  ),
  publicMaxConnsPerIp: s(
    'SERVICE_PUBLIC_MAX_CONNECTIONS_PER_IP',
    int(0, 1_000_000),
    '64',
    "Open connections one client address may hold on the public links listener; more are closed at once (0 = no cap). Behind a tunnel every visitor shares the tunnel's address: size it for all of them.",
  ),
  trustedProxies: s(
    'SERVICE_TRUSTED_PROXIES',
    addressList,
    'loopback',
    'Peers whose `X-Forwarded-For` names the client (comma list of addresses and CIDR ranges; `loopback`, `private`, `none`). The header from any other peer is ignored.',
  ),
  publicEgressMbps: s(
    'SERVICE_PUBLIC_EGRESS_MBPS',
    intOrEmpty(0, 100_000),
    '0',
    'Upload budget in Mbit/s shared fairly by every public link transfer (0 or empty = unlimited). Signed-in and LAN visitors are exempt. The admin setting `public_egress_mbps` overrides it.',
  ),
  publicLinkMaxStreams: s(
    'SERVICE_PUBLIC_LINK_MAX_STREAMS',
    int(0, 10_000),
    '16',
    'Concurrent public requests one link may serve (0 = no cap); more get 429 with Retry-After. Admin setting `public_link_max_streams`.',
  ),
  publicLinkMaxAddresses: s(
    'SERVICE_PUBLIC_LINK_MAX_ADDRESSES',
    int(0, 1_000_000),
    '100',
    'Distinct client addresses one link may see within an hour before it is suspended (0 = never). Admin setting `public_link_max_addresses`.',
  ),
  admissionMaxActive: s(
    'SERVICE_ADMISSION_MAX_ACTIVE',
    int(1, 1000),
    '4',
    'Listings and searches computed at once; more wait their turn, round-robin across people and addresses.',
  ),
  admissionMaxQueue: s(
    'SERVICE_ADMISSION_MAX_QUEUE',
    int(1, 1_000_000),
    '1024',
    'Listings and searches that may wait (one caller at most a quarter of them); more get 503 with Retry-After.',
  ),
  admissionMaxWait: s('SERVICE_ADMISSION_MAX_WAIT', duration, '10s', 'The longest a listing or search waits for its turn before 503 with Retry-After.'),
  dbWriteWait: s(
    'SERVICE_DB_WRITE_WAIT',
    duration,
    '2s',
    "How long a request's write waits (off the event loop) for a database held by another program before 503 with Retry-After.",
  ),
  shutdownGrace: s('SERVICE_SHUTDOWN_GRACE', duration, '10s', 'How long a graceful shutdown waits for in-flight requests.'),
  maxJsonBytes: s('SERVICE_MAX_JSON_BYTES', int(1024, 1 << 30), String(1 << 20), 'Largest JSON request body (413 above).'),
  maxUploadBytes: s('SERVICE_LIMITS_MAX_UPLOAD_BYTES', int(0), '5368709120', 'Largest upload in bytes; 0 means no limit.'),
  maxArchiveBytes: s('SERVICE_LIMITS_MAX_ARCHIVE_BYTES', int(0), '1073741824', 'Largest archive to list, extract or create, in bytes; 0 means no limit.'),
  maxChunkBytes: s(
    'SERVICE_UPLOAD_MAX_CHUNK_BYTES',
    int(1 << 20, 1 << 30),
    String(32 << 20),
    'Largest upload chunk; keeps bodies under tunnel caps (100 MB at common tunnels).',
  ),
  opLease: s(
    'SERVICE_OP_LEASE',
    durationIn(3000, 3_600_000),
    '60s',
    "Several instances (PostgreSQL): how long a running op stays an instance's without renewal (renewed every third of it); a killed instance's ops resume on another after about this long. The same lease holds an upload finalize and a public link's stream slots (freed after it when their instance died). Too short a lease lets a busy but live instance's ops be taken over.",
  ),
  uploadSessionTtl: s('SERVICE_UPLOAD_SESSION_TTL', duration, '24h', 'How long an unfinished chunked upload is kept before its parts are swept.'),
  defaultStorageDriver: s('SERVICE_DEFAULT_STORAGE_DRIVER', str, '', 'First boot only: driver of a storage to create when none exists (`local`, `s3`, ...).'),
  defaultStorageName: s('SERVICE_DEFAULT_STORAGE_NAME', str, 'Files', 'First boot only: name of the seeded storage.'),
  defaultStoragePath: s('SERVICE_DEFAULT_STORAGE_PATH', str, '', 'First boot only: folder of a seeded local storage.'),
  defaultStorageConfig: s('SERVICE_DEFAULT_STORAGE_CONFIG', json, '', 'First boot only: driver config of the seeded storage as one line of JSON (any driver).'),
  defaultS3Bucket: s('SERVICE_DEFAULT_STORAGE_S3_BUCKET', str, '', 'First boot only (s3): bucket.'),
  defaultS3Prefix: s('SERVICE_DEFAULT_STORAGE_S3_PREFIX', str, '', 'First boot only (s3): prefix (storage root, must not be empty).'),
  defaultS3Endpoint: s('SERVICE_DEFAULT_STORAGE_S3_ENDPOINT', str, '', 'First boot only (s3): endpoint of a non-AWS store.'),
  defaultS3Region: s('SERVICE_DEFAULT_STORAGE_S3_REGION', str, '', 'First boot only (s3): region (default auto).'),
  defaultS3AccessKey: s('SERVICE_DEFAULT_STORAGE_S3_ACCESS_KEY', str, '', 'First boot only (s3): access key.'),
  defaultS3SecretKey: s('SERVICE_DEFAULT_STORAGE_S3_SECRET_KEY', str, '', 'First boot only (s3): secret key.', true),
  defaultS3PathStyle: s('SERVICE_DEFAULT_STORAGE_S3_PATH_STYLE', str, '', 'First boot only (s3): path-style addressing (true/false; auto with an endpoint).'),
  shareMaxTtl: s('SERVICE_SHARE_MAX_TTL', int(0, 3650), '7', 'Seeds `share_max_ttl_days` once (days; 0 = no ceiling).'),
  shareZipWarmMaxBytes: s(
    'SERVICE_SHAREZIP_WARM_MAX_BYTES',
    int(0),
    String(2 * 1024 ** 3),
    'Folder shares larger than this are zipped on first click instead of pre-built (0 = no ceiling).',
  ),
  shareZipMaxAge: s('SERVICE_SHAREZIP_MAX_AGE', duration, '7d', 'Cached folder ZIPs older than this are swept (0 = keep for the share life).'),
  replicaRetryBackoff: s(
    'SERVICE_REPLICA_RETRY_BACKOFF',
    duration,
    '5s',
    'Replication: wait before the second attempt of a failed backup copy (doubled for the third; 3 attempts in all).',
  ),
  replicaRpoWarn: s(
    'SERVICE_REPLICA_RPO_WARN',
    duration,
    '1h',
    'Replication: a recovery point (the age of the oldest change not yet on its backup) above this shows amber in the admin console, the report and the tray.',
  ),
  replicaTimeout: s(
    'SERVICE_REPLICA_TIMEOUT',
    duration,
    '10m',
    'Replication: longest one copy attempt may take; a target that hangs fails the attempt and the queue goes on.',
  ),
  volumeCheckInterval: s(
    'SERVICE_VOLUME_CHECK_INTERVAL',
    durationOrOff(1000, 300_000),
    '5s',
    "Removable drives: how often each local storage's folder and the volume under it are checked (a stat and `findmnt`/`diskutil`/`Win32_Volume`); an unplugged drive turns its storage offline, the same drive mounted elsewhere is re-attached (0 = off; 1s..300s).",
  ),
  backgroundCpu: s(
    'SERVICE_BACKGROUND_CPU',
    int(0, 6400),
    '100',
    'CPU budget of background work (thumbnails, virus scans, replication, sync walks, ZIP warm-ups) in percent of one core, measured over the whole process and its tools (100 = one core; 0 = no limit). Admin setting `background_cpu_percent`.',
  ),
  powerState: s(
    'SERVICE_POWER_STATE',
    oneOf('auto', 'ac', 'battery', 'busy'),
    'auto',
    "Power state the governor assumes instead of the desktop host's reports: `ac` (mains, user away), `battery` or `busy` (user at the machine); both of the last two run background work one at a time. `auto` follows the host (mains and away without one).",
  ),
  thumbsUrlTtl: s('SERVICE_THUMBS_URL_TTL', duration, '24h', 'Lifetime of signed thumbnail URLs (0 = the default 24h).'),
  thumbsSweepInterval: s('SERVICE_THUMBS_SWEEP_INTERVAL', duration, '6h', 'Thumbnail cache sweep cadence (0 disables).'),
  thumbsOnSync: s(
    'SERVICE_THUMBS_ON_SYNC',
    bool,
    'true',
    'Pictures, films, sound and PDFs that a sync finds get thumbnails on their own, at low priority (false: only after writes and `service thumb backfill`).',
  ),
  textIndex: s(
    'SERVICE_TEXT_INDEX',
    bool,
    'true',
    'Search inside documents: the text of PDFs, office documents and long text files is extracted in the background, at low priority (false: search finds names and the text of small uploads only; docs/fulltext.md).',
  ),
  ocrLangs: s(
    'SERVICE_OCR_LANGS',
    str,
    'eng',
    'Tesseract languages for storages whose OCR is on (Admin → Storages), joined by \'+\', e.g. `eng+tur` (Debian: tesseract-ocr-eng, tesseract-ocr-tur); docs/fulltext.md, "OCR".',
  ),
  oidcIssuer: s(
    'SERVICE_OIDC_ISSUER',
    exactUrl,
    '',
    "OIDC sign-in: the identity provider's issuer URL (discovery at `<issuer>/.well-known/openid-configuration`; https, or http on loopback). Set here, the issuer and the other SERVICE_OIDC_* values win over the admin console at every start and show there as read-only (docs/auth.md).",
  ),
  oidcClientId: s('SERVICE_OIDC_CLIENT_ID', str, '', 'OIDC sign-in: client id registered at the provider.'),
  oidcClientSecret: s(
    'SERVICE_OIDC_CLIENT_SECRET',
    str,
    '',
    'OIDC sign-in: client secret (stored encrypted; empty for a public client, which PKCE still protects).',
    true,
  ),
  oidcScopes: s(
    'SERVICE_OIDC_SCOPES',
    str,
    '',
    'OIDC sign-in: scopes asked for (default `openid email profile`; add `groups` when your provider needs it for the groups claim).',
  ),
  oidcGroupsClaim: s(
    'SERVICE_OIDC_GROUPS_CLAIM',
    str,
    '',
    "OIDC sign-in: claim holding the person's groups (default `groups`; a dotted path such as `realm_access.roles` reaches into an object).",
  ),
  oidcAdminGroup: s(
    'SERVICE_OIDC_ADMIN_GROUP',
    str,
    '',
    'OIDC sign-in: members of this provider group sign in as admins; accounts the provider created are demoted to user when they leave it.',
  ),
  oidcRedirectUrl: s(
    'SERVICE_OIDC_REDIRECT_URL',
    url,
    '',
    'OIDC sign-in: callback URL registered at the provider (default `<SERVICE_PUBLIC_URL or the address the browser used>/api/auth/oidc/callback`).',
  ),
  oidcLabel: s('SERVICE_OIDC_LABEL', str, '', 'OIDC sign-in: name on the sign-in button ("Sign in with <label>"; default `SSO`).'),
  smtpHost: s('SERVICE_SMTP_HOST', str, '', 'SMTP server for link and alert e-mails (empty = e-mail off).'),
  smtpPort: s('SERVICE_SMTP_PORT', int(1, 65535), '587', 'SMTP port.'),
  smtpUser: s('SERVICE_SMTP_USER', str, '', 'SMTP user name.'),
  smtpPassword: s('SERVICE_SMTP_PASSWORD', str, '', 'SMTP password.', true),
  smtpFrom: s('SERVICE_SMTP_FROM', str, '', 'Sender address (default filedock@<host>).'),
  smtpSecure: s(
    'SERVICE_SMTP_SECURE',
    oneOf('auto', 'tls', 'starttls', 'none'),
    'auto',
    'SMTP transport security: tls (implicit, port 465), starttls, none, or auto by port.',
  ),
  updateCheck: s('SERVICE_UPDATE_CHECK', bool, '1', 'Check for new releases (0 = never make an outbound request).'),
  updateChannel: s('SERVICE_UPDATE_CHANNEL', str, 'stable', 'Release channel.'),
  updateManifestUrl: s('SERVICE_UPDATE_MANIFEST_URL', url, '', 'Where the release manifest is fetched (may be your own mirror). Empty = no checks.'),
  updateInterval: s('SERVICE_UPDATE_INTERVAL', duration, '24h', 'Check cadence; raised to at least 1h.'),
  updatePolicy: s('SERVICE_UPDATE_POLICY', oneOf('', 'off', 'manual', 'patch', 'minor'), '', 'off, manual (default: announce only), patch, minor.'),
  autoUpgrade: s('AUTO_UPGRADE', bool, 'false', 'Legacy switch: true selects the patch policy unless SERVICE_UPDATE_POLICY is set.'),
  updateWindow: s('SERVICE_UPDATE_WINDOW', str, '', 'Daily window for automatic upgrades, e.g. 03:00-05:00 (server local time).'),
  updatePreCommand: s('SERVICE_UPDATE_PRE_COMMAND', str, '', 'Shell command run before a self-upgrade; a non-zero exit aborts.'),
  installMode: s(
    'SERVICE_INSTALL_MODE',
    oneOf('binary', 'docker', 'desktop', 'source'),
    'source',
    'How this copy was installed; docker installs refuse to self-upgrade.',
  ),
  desktopBootstrap: s(
    'SERVICE_DESKTOP_BOOTSTRAP',
    str,
    '',
    'Set by the desktop shell on first run: one-time secret that signs the owner in (docs/server-host-protocol.md).',
    true,
  ),
  demo: s('SERVICE_DEMO', bool, 'false', 'Public demo mode: refuses local and remote storage drivers.'),
  // WebDAV gateway (docs/gateways-webdav.md)
  webdav: s('SERVICE_WEBDAV', bool, 'true', 'Serve the whole tree over WebDAV at /dav/ on the main listener (Basic auth: account password or an API key).'),
  webdavAllowHttp: s(
    'SERVICE_WEBDAV_ALLOW_HTTP',
    bool,
    'false',
    'Accept WebDAV sign-ins over plain HTTP from other machines (the password then crosses the network in clear). Loopback and TLS are always accepted.',
  ),
  // SFTP gateway (docs/gateways-sftp.md)
  sftpListen: s(
    'SERVICE_SFTP_LISTEN',
    listenAt,
    '',
    'SFTP gateway: where it listens (`127.0.0.1:2022`, or `:2022` for every address); empty = off. The host key is made once into the data folder.',
  ),
  // FTPS gateway (docs/gateways-ftp.md)
  ftpListen: s(
    'SERVICE_FTP_LISTEN',
    listenAt,
    '',
    'FTPS gateway: where it listens (`127.0.0.1:2121`, or `:2121` for every address); empty = off. Explicit TLS (AUTH TLS) is required except from loopback.',
  ),
  ftpPassivePorts: s(
    'SERVICE_FTP_PASSIVE_PORTS',
    str,
    '',
    'FTPS gateway: passive data ports, e.g. `50000-50100` (open them in the firewall); empty = any free port.',
  ),
  ftpPasvAddress: s(
    'SERVICE_FTP_PASV_ADDRESS',
    str,
    '',
    'FTPS gateway: the IPv4 address PASV announces, for a server behind NAT (your public address); empty = the address the client connected to.',
  ),
  ftpTlsCert: s(
    'SERVICE_FTP_TLS_CERT',
    str,
    '',
    'FTPS gateway: PEM certificate file (with SERVICE_FTP_TLS_KEY); empty = a self-signed certificate made once in the data dir.',
  ),
  ftpTlsKey: s('SERVICE_FTP_TLS_KEY', str, '', 'FTPS gateway: PEM private key file of SERVICE_FTP_TLS_CERT.'),
  ftpIdleTimeout: s('SERVICE_FTP_IDLE_TIMEOUT', duration, '5m', 'FTPS gateway: an idle control connection is closed after this long.'),
  // S3 gateway (docs/gateways-s3.md)
  s3Listen: s(
    'SERVICE_S3_LISTEN',
    listenAt,
    '',
    "S3 gateway: where it listens (`127.0.0.1:9000`, or `:9000` for every address); empty = off. Path-style; sign with an API key's S3 credentials (docs/gateways-s3.md).",
  ),
  // NFS gateway (docs/gateways-nfs.md)
  nfsListen: s(
    'SERVICE_NFS_LISTEN',
    listenAt,
    '',
    'NFSv3 gateway: where it listens (`192.168.1.5:2049`, or `:2049` for every address); empty = off. NFS and MOUNT share this one port; exports are set through /api/admin/gateways/nfs/exports (docs/gateways-nfs.md). NFSv3 trusts the network: use it on a LAN you trust.',
  ),
  // Document server (docs/docserver.md); config file keys `external_services.docserver.*`
  docserverUrl: s(
    'SERVICE_DOCSERVER_URL',
    url,
    '',
    'Document server (office editing) base URL, as this service and the browsers reach it; active with SERVICE_DOCSERVER_JWT. Set here, the stored `docserver` row is rewritten at every start and shows `env_managed` (config file: `external_services.docserver.url`).',
    false,
    'external_services.docserver.url',
  ),
  docserverJwt: s(
    'SERVICE_DOCSERVER_JWT',
    str,
    '',
    "Document server: the shared HS256 secret (the same as the document server's own; stored encrypted; config file: `external_services.docserver.jwt_secret`).",
    true,
    'external_services.docserver.jwt_secret',
  ),
  docserverCallbackUrl: s(
    'SERVICE_DOCSERVER_CALLBACK_URL',
    url,
    '',
    'Document server: the base URL it uses to reach this service (fetch and save callbacks); empty = SERVICE_PUBLIC_URL, else the address the browser used (config file: `external_services.docserver.callback_url`).',
    false,
    'external_services.docserver.callback_url',
  ),
  appPlugins: s(
    'SERVICE_APP_PLUGINS',
    bool,
    'true',
    'App plugins (docs/app-plugins.md): off refuses every app route with 503 `plugins_disabled` and runs no app code. When on, an admin can still switch apps off for users (`app_plugins_disabled`).',
  ),
  appPluginMemory: s('SERVICE_APP_PLUGIN_MEMORY_MB', int(8, 1024), '64', "App plugins: the memory cap of each app's sandbox, in MiB."),
  appWakeupInterval: s(
    'SERVICE_APP_WAKEUP_INTERVAL',
    durationOrOff(1000, 7 * 86_400_000),
    '1h',
    'App plugins: how often each app holding the `schedule` permission is woken (its `tick`); 0 = never (docs/app-plugins.md, "Wake-up").',
  ),
  appWakeupFirst: s('SERVICE_APP_WAKEUP_FIRST', duration, '30s', 'App plugins: the first wake-up round after the server starts.'),
  appStoreTimeout: s(
    'SERVICE_APP_STORE_TIMEOUT',
    duration,
    '15s',
    'App store: the bound on each request to a store (index, signature, package; docs/app-store.md).',
  ),
} as const;

export type SettingKey = keyof typeof SETTINGS;
export type Config = { readonly [K in SettingKey]: (typeof SETTINGS)[K] extends Setting<infer T> ? T : never } & {
  /** Resolved absolute data folder. */
  readonly dataDirResolved: string;
  readonly version: string;
};
