/**
 * GET /metrics behind its setting (docs/operations.md, "Metrics"): off by
 * default; on, a scraper shows the bearer token, or, with access `lan`, a
 * caller on this machine or its LAN needs none. The token is made by the
 * server (32 random bytes), kept encrypted under the install's secret key and
 * shown to admins on request. The registry (and prom-client) is loaded the
 * first time metrics are on; counting starts then.
 */
import type { EventBus } from '../../events';
import type { MetricsSettingsView } from '../../contract';
import type { MetricsSetting, SettingsStore } from '../../settings';
import { AppError } from '../../errors';
import { decrypt, encrypt, randomToken, safeEqual } from '../../lib/crypto';
import { lanCaller } from '../public/egress';
import type { Ctx, Mw } from '../context';
import type { MetricSources } from './registry';

type Loaded = Awaited<ReturnType<typeof import('./registry').buildRegistry>>;

const FAILED_SIGN_INS = new Set(['auth.failed', 'auth.mfa_failed']);

export class Metrics {
  private loaded: Loaded | null = null;
  private loading: Promise<Loaded> | null = null;
  private on = false;
  private failedLogins = 0;

  constructor(
    private o: {
      settings: SettingsStore;
      secretKey: Buffer;
      bus: EventBus;
      sources: Omit<MetricSources, 'failedLogins'>;
      log: (msg: string, err?: unknown) => void;
    },
  ) {
    o.bus.on('audit', (e) => {
      if (FAILED_SIGN_INS.has(e.action)) this.failedLogins++;
    });
    o.settings.onChange((key) => {
      if (key === 'metrics') this.follow();
    });
    this.follow();
  }

  /** Runs before routing: times the request while metrics are on; otherwise only passes it on. */
  readonly middleware: Mw = (ctx, next) => {
    if (this.on && this.loaded) this.loaded.http.start(ctx);
    return next();
  };

  /** What the admin sees: never the token itself. */
  view(): MetricsSettingsView {
    const m = this.o.settings.get('metrics');
    return { enabled: m.enabled, access: m.access, token_set: m.token !== '', path: '/metrics' };
  }

  /** Saves a change of `enabled` / `access`; switching on without a token makes one, and resolves once counting runs. */
  async update(patch: Partial<Pick<MetricsSetting, 'enabled' | 'access'>>): Promise<{ from: MetricsSetting; to: MetricsSetting }> {
    const { from, to } = await this.o.settings.update('metrics', (cur) => {
      const next = { ...cur, ...patch };
      if (next.enabled && !next.token) next.token = encrypt(this.o.secretKey, randomToken(32));
      return next;
    });
    if (to.enabled) await this.load();
    return { from, to };
  }

  /** The bearer token in clear ('' before one was made). */
  token(): string {
    const t = this.o.settings.get('metrics').token;
    return t ? decrypt(this.o.secretKey, t) : '';
  }

  /** Replaces the token (the old one stops working at once) and returns the new one. */
  async regenerate(): Promise<string> {
    const token = randomToken(32);
    await this.o.settings.update('metrics', (cur) => ({ ...cur, token: encrypt(this.o.secretKey, token) }));
    return token;
  }

  /**
   * The exposition text for `ctx`'s caller: `not_found` while off (and on the public links listener),
   * `unauthenticated` without the right token (a LAN caller needs none under access `lan`).
   */
  async scrape(ctx: Ctx): Promise<{ contentType: string; body: string }> {
    const m = this.o.settings.get('metrics');
    if (!m.enabled || ctx.state.publicListener) throw new AppError('not_found');
    if (!(m.access === 'lan' && lanCaller(ctx))) {
      const header = ctx.get('authorization');
      const given = /^bearer /i.test(header) ? header.slice(7).trim() : '';
      if (!given || !m.token || !safeEqual(given, decrypt(this.o.secretKey, m.token))) throw new AppError('unauthenticated');
    }
    const { registry } = await this.load();
    return { contentType: registry.contentType, body: await registry.metrics() };
  }

  private follow(): void {
    this.on = this.o.settings.get('metrics').enabled;
    if (this.on) this.load().catch((e) => this.o.log('metrics could not start', e));
  }

  private load(): Promise<Loaded> {
    return (this.loading ??= import('./registry')
      .then(({ buildRegistry }) => {
        this.loaded = buildRegistry({ ...this.o.sources, failedLogins: () => this.failedLogins });
        return this.loaded;
      })
      .catch((e) => {
        this.loading = null; // the next scrape or switch-on tries again
        throw e;
      }));
  }
}
