/**
 * The driver manager: one cached driver per storage. A saved storage is built
 * and probed first, then swapped in with one map write (the old driver is
 * closed after), so no request ever sees a half-updated storage.
 */
import { join } from 'node:path';
import { AppError, isAppError } from '../errors';
import { formatDuration } from '../lib/duration';
import { openSecrets, resolveConfig, type StorageConfig } from './config';
import type { DriverRegistry } from './registry';
import type { DriverDecorator, StorageDriver } from './types';
import { heldReadsSafe } from './held-reads';
import { metered, type RequestSink } from './meter';

export type StorageId = number | string;

/** A storage as stored: config with canonical keys and sealed secrets. */
export interface StorageSpec {
  uid: string;
  driver: string;
  config: StorageConfig;
}

export interface ProbeResult {
  /** Up to 20 names from the root folder. */
  sample_listing: string[];
  /** Number of entries in the root folder. */
  object_count: number;
}

export const PROBE_TIMEOUT_MS = 10_000;
const SAMPLE_SIZE = 20;
/** After a timeout, how long a driver may still take to say why, so its error joins the message. */
const LAST_WORD_MS = 250;

export interface ManagerOptions {
  /** The install's secret key (opens sealed secrets). */
  secretKey: Buffer;
  /** Data dir under which each storage gets `storage/<uid>` for driver state. */
  stateDir: string;
  /** Called when closing a replaced driver fails; never thrown to the caller. */
  onCloseError?: (id: StorageId, e: unknown) => void;
  /** Wrapped around every driver `build` returns, first one innermost. */
  decorators?: DriverDecorator[];
  /** See DriverContext.staleBefore: set by the server, never by a CLI command. */
  staleBefore?: number;
  /** `SERVICE_STAGING_DIR` when set: each storage stages its upload sessions in `storage/<uid>` there (DriverContext.stagingDir). */
  stagingRoot?: string;
  /**
   * The request meter's sink for a storage (null when not metered): handed to
   * the driver as `countRequest` and wrapped around it innermost (storage/meter.ts).
   */
  requestSink?: (uid: string, driver: string) => RequestSink | null;
}

export class DriverManager {
  private readonly drivers = new Map<StorageId, StorageDriver>();

  constructor(
    private readonly registry: DriverRegistry,
    private readonly opts: ManagerOptions,
  ) {}

  /**
   * Builds (does not probe, does not install) a driver for `spec`: opens its
   * secrets and resolves its config. Unknown driver or a config problem →
   * `validation_failed` with the first problem's field. `bare` skips the
   * decorators (replication targets: a backup is not a storage, nothing of a
   * storage's read-only flag or fan-out applies to it).
   */
  async build(spec: StorageSpec, o: { bare?: boolean } = {}): Promise<StorageDriver> {
    const mod = this.registry.get(spec.driver);
    if (!mod) throw new AppError('validation_failed', { field: 'driver', reason: `unknown driver ${spec.driver}` }, { field: 'driver' });
    const opened = openSecrets(mod.descriptor, spec.config, this.opts.secretKey);
    const { config, problems } = resolveConfig(mod, opened);
    if (problems.length) {
      const p = problems[0];
      throw new AppError('validation_failed', { field: `config.${p.field}`, reason: p.message }, { field: `config.${p.field}`, problems });
    }
    const sink = o.bare ? null : (this.opts.requestSink?.(spec.uid, spec.driver) ?? null);
    let driver = await mod.create(config, {
      stateDir: join(this.opts.stateDir, 'storage', spec.uid),
      stagingDir: this.opts.stagingRoot && join(this.opts.stagingRoot, 'storage', spec.uid),
      uid: spec.uid,
      staleBefore: this.opts.staleBefore,
      countRequest: sink ?? undefined,
    });
    driver = heldReadsSafe(driver);
    if (sink) driver = metered(driver, sink);
    if (!o.bare) for (const dec of this.opts.decorators ?? []) driver = dec.wrap(driver, spec.uid);
    return driver;
  }

  /**
   * Lists the root within `timeoutMs`. Rejects with `storage_unreachable`
   * whose `reason` is the driver's message verbatim, or on timeout
   * `timed out after 10s: <driver's error or "no answer">`.
   */
  async probe(driver: StorageDriver, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
    const listing = (async () => {
      const sample: string[] = [];
      let count = 0;
      for await (const e of driver.list('')) {
        if (sample.length < SAMPLE_SIZE) sample.push(e.name);
        count++;
      }
      return { sample_listing: sample, object_count: count };
    })();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    try {
      const first = await Promise.race([listing, timedOut]);
      if (first !== 'timeout') return first;
    } catch (e) {
      throw unreachable(driverMessage(e));
    } finally {
      clearTimeout(timer);
    }
    const lastWord = await Promise.race([
      listing.then(
        () => null,
        (e: unknown) => driverMessage(e),
      ),
      new Promise<null>((r) => setTimeout(() => r(null), LAST_WORD_MS)),
    ]);
    throw unreachable(`timed out after ${formatDuration(timeoutMs)}: ${lastWord ?? 'no answer'}`);
  }

  /** Makes `driver` the one serving storage `id`; the driver it replaces is closed afterwards. */
  async install(id: StorageId, driver: StorageDriver): Promise<void> {
    const old = this.drivers.get(id);
    this.drivers.set(id, driver);
    if (old && old !== driver) await this.closeQuietly(id, old);
  }

  /** The driver serving storage `id`, or undefined when none is installed. */
  get(id: StorageId): StorageDriver | undefined {
    return this.drivers.get(id);
  }

  /** Drops and closes the driver of storage `id`. Idempotent. */
  async remove(id: StorageId): Promise<void> {
    const old = this.drivers.get(id);
    this.drivers.delete(id);
    if (old) await this.closeQuietly(id, old);
  }

  /** Closes every driver (shutdown). */
  async closeAll(): Promise<void> {
    const all = [...this.drivers.entries()];
    this.drivers.clear();
    await Promise.all(all.map(([id, d]) => this.closeQuietly(id, d)));
  }

  private async closeQuietly(id: StorageId, driver: StorageDriver): Promise<void> {
    try {
      await driver.close();
    } catch (e) {
      this.opts.onCloseError?.(id, e);
    }
  }
}

const unreachable = (reason: string) => new AppError('storage_unreachable', { reason }, { reason }, reason);

/** The driver's own sentence: an AppError's reason when it has one, else the error's message. */
function driverMessage(e: unknown): string {
  if (isAppError(e)) return typeof e.params.reason === 'string' && e.params.reason ? e.params.reason : e.message;
  return e instanceof Error ? e.message : String(e);
}
