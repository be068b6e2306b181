/**
 * The conformance suite on the `local` driver, with a 2.5 GiB big file so
 * offsets past 2^31 are exercised (override with CONFORMANCE_BIG_BYTES).
 */
import { tempDir } from '../helpers/tools';
import { localDriver } from '../../server/storage/drivers/local';
import { driverConformance } from './conformance';

const GiB = 1024 ** 3;

driverConformance(
  'local driver',
  async () => {
    const tmp = tempDir('filedock-local-conf-');
    const driver = await localDriver.create({ path: `${tmp.dir}/root` }, { stateDir: tmp.dir, uid: 'conformance' });
    return {
      driver,
      async teardown() {
        await driver.close();
        tmp.cleanup();
      },
    };
  },
  { bigFileBytes: Number(process.env.CONFORMANCE_BIG_BYTES ?? 2.5 * GiB) },
);
