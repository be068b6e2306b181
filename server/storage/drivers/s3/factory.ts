/** Builds the s3 driver (loaded on demand: it pulls in the AWS SDK). */
import { validation } from '../../../errors';
import type { RequestSink } from '../../meter';
import { countS3Requests, createS3Client, DEFAULT_TUNING, S3Api, type S3Tuning } from './client';
import { parseS3Config } from './config';
import { KeyMap } from './keys';
import { S3Driver } from './s3.driver';

/** Builds the driver with explicit time limits (tests shrink them). Invalid config → `validation_failed` on the first field. */
/** With `countRequest` (a metered storage), every HTTP attempt the SDK sends is counted by class. */
export function createS3Driver(config: Record<string, unknown>, tuning: S3Tuning = DEFAULT_TUNING, countRequest?: RequestSink): S3Driver {
  const { settings, problems } = parseS3Config(config);
  if (!settings) throw validation(problems[0].field, problems[0].message);
  const client = createS3Client(settings, tuning);
  if (countRequest) countS3Requests(client, countRequest);
  const api = new S3Api(client, settings.bucket, tuning);
  return new S3Driver(api, new KeyMap(settings.prefix), { presign: !settings.disablePresign, selfMetered: !!countRequest });
}
