/**
 * The `s3` driver against a real S3-compatible server (s3rver on loopback):
 * the shared conformance suite, then what is particular to S3.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { createS3Driver, type S3Driver, type S3Tuning } from '../../server/storage/drivers/s3';
import { driverConformance } from './conformance';
import { startS3rver, s3rverConfig, type S3rver } from '../helpers/s3rver';

/** Short limits so failure cases answer in seconds. */
const FAST: S3Tuning = { connectTimeoutMs: 1_000, requestTimeoutMs: 4_000, idleTimeoutMs: 3_000, callTimeoutMs: 8_000, maxAttempts: 2 };

driverConformance('s3 conformance (s3rver)', async () => {
  const server = await startS3rver();
  const driver = createS3Driver(s3rverConfig(server, 'conformance/root'), FAST);
  return {
    driver,
    async teardown() {
      await driver.close();
      await server.close();
    },
  };
}, { bigFileBytes: 40 * 1024 * 1024 });
