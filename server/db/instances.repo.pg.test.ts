/**
 * Which servers use the database, on a real cluster: another server's connections count, a command-line
 * tool's and this server's own do not, and a server killed with SIGKILL stops counting once its sockets
 * close, which is what lets the next start take over at once what it left.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cliAppName, InstancesRepo, openPostgresDatabase, serverAppName, type Db } from './index';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';

const skip = needPostgres();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('InstancesRepo on PostgreSQL', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let url: string;
  let self: Db;
  before(async () => {
    cluster = await startPostgres();
    url = await cluster.createDatabase('instances');
    self = await openPostgresDatabase(url, undefined, { applicationName: serverAppName('self') });
  });
  after(async () => {
    await self?.close();
    await cluster?.destroy();
  });

  test('another server counts; a tool and this server do not; a killed server stops counting', async () => {
    const repo = new InstancesRepo(self);
    assert.equal(await repo.othersRunning('self'), false, 'only this server');
    const tool = await openPostgresDatabase(url, undefined, { applicationName: cliAppName('tool') });
    await tool.async.sql('SELECT 1');
    assert.equal(await repo.othersRunning('self'), false, 'a command-line tool is not a server');
    await tool.close();

    // Another server in a process of its own, holding a connection until it is killed.
    const other = spawn(
      process.execPath,
      [
        '-e',
        `const pg = require('pg'); const c = new pg.Client({ connectionString: ${JSON.stringify(url)}, application_name: ${JSON.stringify(serverAppName('other'))} });
         c.connect().then(() => console.log('connected'));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise((r) => other.stdout!.once('data', r));
      assert.equal(await repo.othersRunning('self'), true, 'another server is running');
      assert.equal(await repo.othersRunning('other'), true, 'and it sees this one');
    } finally {
      other.kill('SIGKILL');
    }
    let running = true;
    for (let i = 0; i < 50 && running; i++) running = (await repo.othersRunning('self')) && !(await sleep(100));
    assert.equal(running, false, 'gone once its process was killed');
  });
});
