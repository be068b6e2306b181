/** `service user add|list|passwd`: account management straight on the database. */
import { createInterface } from 'node:readline';
import type { Config } from '../config';
import { ROLES, type Role } from '../auth';
import { openCliContext } from './context';
import { tenantOf, TENANT_OPTION } from './tenant';
import { helpIfAsked, parse, UsageError } from './args';

const USAGE = `
Usage:
  service user add --email <email> [--username <name>] [--role admin|user|viewer] [--password <pw>]
  service user list [--role <role>] [--json]
  service user passwd --email <email|username> [--password <pw>]
Without --password the password is read from standard input (one line).
--tenant <slug> works in that tenant (multi-tenant mode, docs/tenants.md); without it, tenant 1.`;

async function readPassword(): Promise<string> {
  const rl = createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    rl.close();
    return line;
  }
  throw new UsageError('no password given (use --password or pipe one line to stdin)');
}

export async function userCommand(argv: string[], config: Config): Promise<number> {
  helpIfAsked(argv, USAGE);
  const [sub, ...rest] = argv;
  const { values } = parse(
    rest,
    {
      email: { type: 'string' },
      username: { type: 'string' },
      role: { type: 'string' },
      password: { type: 'string' },
      json: { type: 'boolean' },
      ...TENANT_OPTION,
    },
    USAGE,
  );
  const c = await openCliContext(config);
  const a = c.auth;
  try {
    const scope = await tenantOf(c.db, values.tenant);
    if (sub === 'add') {
      if (!values.email) throw new UsageError('--email is required' + USAGE);
      const role = (values.role ?? 'user') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const password = values.password ?? (await readPassword());
      const u = await a.users.create(scope, { email: values.email, username: values.username, role, password }, { request: c.cliRequest });
      console.log(`created user ${u.id} ${u.email} (${u.username}, ${u.role})`);
    } else if (sub === 'list') {
      const users = await a.users.list(scope, { role: values.role as Role | undefined, limit: 100_000 });
      if (values.json) console.log(JSON.stringify(users, null, 2));
      else
        for (const u of users)
          console.log(`${String(u.id).padStart(4)}  ${u.role.padEnd(6)} ${u.disabled ? 'disabled' : 'active  '} ${u.email}  (${u.username})`);
    } else if (sub === 'passwd') {
      if (!values.email) throw new UsageError('--email is required' + USAGE);
      const row = await a.repo.byLogin(scope, values.email);
      if (!row) throw new UsageError(`no user ${values.email}`);
      await a.users.update(scope, row.id, { password: values.password ?? (await readPassword()) }, { request: c.cliRequest });
      console.log(`password changed for ${row.email}`);
    } else {
      throw new UsageError(USAGE);
    }
    return 0;
  } finally {
    await c.close();
  }
}
