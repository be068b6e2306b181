/**
 * The admin's Test button (spec: Admin: external services; rule 6). Two legs:
 *   1. service → server: `GET <url>/healthcheck` (5 s), healthy when it
 *      answers 200 `true` (the document server's own answer; any 200 for the
 *      diagram editor); the version is read from the editor script when the
 *      server publishes it;
 *   2. server → service (document server only): the document server's
 *      conversion service is asked, with a signed request, to convert a
 *      one-shot probe URL of ours; the probe's fetch route notes whether it
 *      was reached. `reached`: it was fetched; `not_reached`: the server
 *      answered without fetching it (wrong callback URL, private addresses
 *      refused by the server...); `unmeasured`: the server refused our
 *      signature or could not be asked.
 */
import type { ExternalTestReport } from '../contract';
import { AppError } from '../errors';
import type { EditorService } from './editor.service';
import type { ExternalName, ExternalServices } from './external.service';
import { signJwt } from './signing';

const HEALTH_TIMEOUT_MS = 5_000;
const PROBE_TIMEOUT_MS = 15_000;
/** The conversion service's "invalid token" answer. */
const CONVERT_BAD_TOKEN = -8;

export class ExternalTester {
  constructor(
    private external: ExternalServices,
    private editor: EditorService,
  ) {}

  async test(name: ExternalName, requestBase: string): Promise<ExternalTestReport> {
    const url = this.external.view(name).url;
    if (!url) throw new AppError('not_configured', { feature: name });
    const t0 = performance.now();
    let report: ExternalTestReport;
    try {
      const res = await fetch(`${url}/healthcheck`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS), redirect: 'manual' });
      const text = (await res.text()).trim();
      const healthy = res.status === 200 && (name === 'diagram' || text === 'true');
      report = {
        healthy,
        version: null,
        latency_ms: Math.round(performance.now() - t0),
        ...(healthy ? {} : { error: `healthcheck answered ${res.status} ${text.slice(0, 80)}` }),
      };
    } catch (e) {
      report = { healthy: false, version: null, latency_ms: Math.round(performance.now() - t0), error: `healthcheck failed: ${(e as Error).message}` };
    }
    await this.external.recordCheck(name, report.healthy);
    if (name !== 'docserver' || !report.healthy) return report;
    report.version = await this.version(url);
    const ds = this.external.docserver();
    report.callback_base = this.editor.callbackBase(requestBase);
    report.fetch_probe = ds ? await this.probe(ds.url, ds.secret, requestBase) : 'unmeasured';
    return report;
  }

  /** `DocsAPI.DocEditor.version()` as the editor script defines it, or null. */
  private async version(url: string): Promise<string | null> {
    try {
      const res = await fetch(`${url}/web-apps/apps/api/documents/api.js`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS), redirect: 'manual' });
      if (res.status !== 200) {
        await res.body?.cancel();
        return null;
      }
      return /version\s*=\s*function\s*\(\)\s*\{\s*return\s*['"]([\w.-]{1,40})['"]/.exec(await res.text())?.[1] ?? null;
    } catch {
      return null;
    }
  }

  private async probe(url: string, secret: string, requestBase: string): Promise<'reached' | 'not_reached' | 'unmeasured'> {
    const p = this.editor.probe(requestBase);
    try {
      const payload = { async: false, filetype: 'txt', outputtype: 'txt', key: `probe-${Date.now()}`, title: 'probe.txt', url: p.url };
      // The body token signs the request itself; the header token nests it under `payload` (the protocol's header form).
      const token = await signJwt(secret, payload, 300);
      const header = await signJwt(secret, { payload }, 300);
      const res = await fetch(`${url}/ConvertService.ashx`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${header}` },
        body: JSON.stringify({ ...payload, token }),
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        redirect: 'manual',
      });
      const text = await res.text();
      if (p.reached()) return 'reached';
      let answer: { error?: number } = {};
      try {
        answer = JSON.parse(text);
      } catch {
        /* an XML or empty answer */
      }
      if (res.status === 401 || res.status === 403 || answer.error === CONVERT_BAD_TOKEN) return 'unmeasured';
      return res.status >= 200 && res.status < 500 ? 'not_reached' : 'unmeasured';
    } catch {
      return p.reached() ? 'reached' : 'unmeasured';
    } finally {
      p.done();
    }
  }
}
