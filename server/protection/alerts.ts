/**
 * E-mail alerts: every admin gets a message when antivirus finds an
 * infection. (Drop owners are mailed by the shares module when a drop
 * arrives.) Sending never throws; a disabled mailer sends nothing.
 */
import type { EventBus, Mailer } from '../events';
import type { TenantScope } from '../db';

/** Subscribes the infection alert; `adminEmails` (of the event's tenant) is read at send time so new admins are included. */
export function attachInfectionMail(
  bus: EventBus,
  mailer: Mailer,
  adminEmails: (t: TenantScope) => Promise<string[]>,
  log: (m: string, e?: unknown) => void = () => {},
): () => void {
  return bus.on('file.infected', async (e, m) => {
    if (!mailer.enabled) return;
    const to = await adminEmails(m.tenant);
    if (to.length === 0) return;
    const { failed } = await mailer.send(to, {
      subject: `[Filedock] ${e.title}`,
      text: `${e.body}\n\nFile: ${e.node.path}\nSize: ${e.node.size} bytes\nSignature: ${e.meta.signature}\nQuarantined: ${e.meta.quarantined ? `yes (${e.meta.trash_path})` : 'no, the file is still in place'}\n`,
    });
    if (failed.length) log(`infection alert could not be mailed to ${failed.join(', ')}`);
  });
}
