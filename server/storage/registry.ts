/**
 * The driver registry: built-in and plugin drivers register their module the
 * same way; the descriptors it lists drive the admin form, config validation,
 * the root guard, the CLI and `GET /api/admin/storage-drivers`.
 */
import type { DriverDescriptor, DriverModule } from './types';

export class DriverRegistry {
  private readonly mods = new Map<string, DriverModule>();

  /**
   * Adds a driver. Throws (a programming error, caught at boot) when the name
   * is taken or the descriptor is malformed: a field without label or
   * i18n_key, more than one `root` field, or an alias that collides.
   */
  register(mod: DriverModule): void {
    const d = mod.descriptor;
    if (this.mods.has(d.driver)) throw new Error(`storage driver "${d.driver}" is registered twice`);
    const problem = descriptorProblem(d);
    if (problem) throw new Error(`storage driver "${d.driver}": ${problem}`);
    this.mods.set(d.driver, mod);
  }

  /** Removes a driver (a plugin uninstalled or replaced from the app store); true when it was registered. */
  unregister(name: string): boolean {
    return this.mods.delete(name);
  }

  /** The module registered as `name`, or undefined for an unknown driver. */
  get(name: string): DriverModule | undefined {
    return this.mods.get(name);
  }

  /** Every descriptor, in registration order (built-ins first, then plugins). */
  list(): DriverDescriptor[] {
    return [...this.mods.values()].map((m) => m.descriptor);
  }
}

function descriptorProblem(d: DriverDescriptor): string | null {
  if (!d.driver || !d.label || !d.i18n_key) return 'driver, label and i18n_key are required';
  const keys = new Set<string>();
  let roots = 0;
  for (const f of d.fields) {
    if (!f.label || !f.i18n_key) return `field "${f.key}" needs a label and an i18n_key`;
    if (f.root) roots++;
    for (const k of [f.key, ...(f.aliases ?? [])]) {
      if (keys.has(k)) return `key "${k}" is declared twice`;
      keys.add(k);
    }
  }
  return roots > 1 ? 'more than one field is marked root' : null;
}
