/**
 * Rules and settings: which mode a path replicates in. Rules are a tenant's
 * (they match its storages' names); the settings are the installation's.
 * Rules are evaluated by ascending priority (then id); the first enabled rule
 * whose glob matches `<storage name>/<rel>` decides, else `default_mode`. The
 * compiled lists are kept in memory per tenant and dropped on every change,
 * so a change applies at once.
 */
import type { ReplicaRule, ReplicaSettings } from '../contract';
import type { TenantScope } from '../db';
import { AppError, validation } from '../errors';
import { checkCron } from '../jobs';
import type { SettingsStore } from '../settings';
import { compileGlob, globProblem } from './glob';
import type { ReplicationRepo, RuleRow } from './replication.repo';
import { REPLICA_MODES, type ReplicaMode } from './types';

export interface RuleInput {
  path_pattern?: string;
  mode?: string;
  priority?: number;
  enabled?: boolean;
  description?: string | null;
}

export type RuleView = ReplicaRule;
/** A settings PATCH: any subset; every value is checked before anything is stored. */
export type SettingsInput = Partial<Omit<ReplicaSettings, 'default_mode'> & { default_mode: string }>;
export type { ReplicaSettings };

const view = ({ tenant_id: _tenant, ...r }: RuleRow): RuleView => ({ ...r, enabled: !!r.enabled });

export class ReplicaPolicy {
  /** The compiled rules by tenant id. */
  private compiled = new Map<number, Promise<Array<{ re: RegExp; mode: ReplicaMode }>>>();
  private listeners = new Set<() => void>();

  constructor(
    private repo: ReplicationRepo,
    private settings: SettingsStore,
  ) {}

  /**
   * Tenant `s`'s rules as they are now, as a function: the mode for `rel` of its storage named `storage`. The
   * rules are read once and kept until a change (a caller matching many paths asks once).
   */
  async matcher(s: TenantScope): Promise<(storage: string, rel: string) => ReplicaMode> {
    let compiled = this.compiled.get(s.tenant_id);
    if (!compiled) {
      const read = this.repo.rules(s).then((rs) => rs.filter((r) => r.enabled).map((r) => ({ re: compileGlob(r.path_pattern), mode: r.mode })));
      this.compiled.set(s.tenant_id, (compiled = read));
      // A failed read is not kept: the next call asks again.
      read.catch(() => this.compiled.get(s.tenant_id) === read && this.compiled.delete(s.tenant_id));
    }
    const rules = await compiled;
    return (storage, rel) => {
      const path = rel ? `${storage}/${rel}` : storage;
      return rules.find((r) => r.re.test(path))?.mode ?? this.settings.get('replica_default_mode');
    };
  }

  /** The tenant's rules. */
  async rules(s: TenantScope): Promise<RuleView[]> {
    return (await this.repo.rules(s)).map(view);
  }

  /** Adds a rule of the tenant. */
  async createRule(s: TenantScope, input: RuleInput): Promise<RuleView> {
    if (input.path_pattern === undefined) throw validation('path_pattern', 'is required');
    if (input.mode === undefined) throw validation('mode', 'is required');
    const row = await this.repo.insertRule(s, {
      path_pattern: checkGlob(input.path_pattern),
      mode: checkMode(input.mode, 'mode'),
      priority: input.priority ?? 100,
      enabled: input.enabled === false ? 0 : 1,
      description: input.description ?? null,
    });
    this.changed();
    return view(row);
  }

  /** Changes the tenant's rule; another tenant's is `not_found` like a missing one. */
  async updateRule(s: TenantScope, id: number, input: RuleInput): Promise<RuleView> {
    const row = await this.repo.patchRule(s, id, {
      ...(input.path_pattern !== undefined ? { path_pattern: checkGlob(input.path_pattern) } : {}),
      ...(input.mode !== undefined ? { mode: checkMode(input.mode, 'mode') } : {}),
      ...(input.priority !== undefined ? { priority: input.priority } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled ? 1 : 0 } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
    });
    if (!row) throw new AppError('not_found');
    this.changed();
    return view(row);
  }

  /** Removes the tenant's rule; another tenant's is `not_found` like a missing one. */
  async deleteRule(s: TenantScope, id: number): Promise<void> {
    if (!(await this.repo.deleteRule(s, id))) throw new AppError('not_found');
    this.changed();
  }

  settingsView(): ReplicaSettings {
    return {
      report_cron: this.settings.get('replica_report_cron'),
      report_enabled: this.settings.get('replica_report_enabled'),
      default_mode: this.settings.get('replica_default_mode'),
      drill_cron: this.settings.get('replica_drill_cron'),
      audit_cron: this.settings.get('replica_audit_cron'),
      audit_full_cron: this.settings.get('replica_audit_full_cron'),
      audit_sample_size: this.settings.get('replica_audit_sample_size'),
    };
  }

  /** Applies any subset; every value is checked before anything is stored. Listeners (the schedules) run after. */
  async patchSettings(input: SettingsInput): Promise<ReplicaSettings> {
    const cron = input.report_cron !== undefined ? checkCron(input.report_cron, 'report_cron', false) : undefined;
    const drill = input.drill_cron !== undefined ? checkCron(input.drill_cron, 'drill_cron', true) : undefined;
    const audit = input.audit_cron !== undefined ? checkCron(input.audit_cron, 'audit_cron', true) : undefined;
    const full = input.audit_full_cron !== undefined ? checkCron(input.audit_full_cron, 'audit_full_cron', true) : undefined;
    const sample = input.audit_sample_size;
    if (sample !== undefined && !(Number.isInteger(sample) && sample >= 1 && sample <= 100_000))
      throw validation('audit_sample_size', 'must be a whole number from 1 to 100000');
    const mode = input.default_mode !== undefined ? checkMode(input.default_mode, 'default_mode') : undefined;
    if (cron !== undefined) await this.settings.set('replica_report_cron', cron);
    if (drill !== undefined) await this.settings.set('replica_drill_cron', drill);
    if (audit !== undefined) await this.settings.set('replica_audit_cron', audit);
    if (full !== undefined) await this.settings.set('replica_audit_full_cron', full);
    if (sample !== undefined) await this.settings.set('replica_audit_sample_size', sample);
    if (input.report_enabled !== undefined) await this.settings.set('replica_report_enabled', input.report_enabled);
    if (mode !== undefined) await this.settings.set('replica_default_mode', mode);
    this.changed();
    return this.settingsView();
  }

  /** Runs `fn` after every rule or settings change. */
  onChange(fn: () => void): void {
    this.listeners.add(fn);
  }

  private changed(): void {
    this.compiled.clear();
    for (const fn of this.listeners) fn();
  }
}

function checkGlob(p: string): string {
  const problem = globProblem(p);
  if (problem) throw validation('path_pattern', problem);
  return p.trim();
}

function checkMode(m: string, field: string): ReplicaMode {
  if (!(REPLICA_MODES as readonly string[]).includes(m)) throw validation(field, `must be one of ${REPLICA_MODES.join(', ')}`);
  return m as ReplicaMode;
}
