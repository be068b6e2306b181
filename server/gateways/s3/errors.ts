/**
 * The S3 gateway's one error table: every S3 error code it answers with its
 * HTTP status, and every `AppError` code mapped onto one of them. Errors
 * leave as S3's XML `<Error>` document (nothing for HEAD, which has no body).
 */
import type { ServerResponse } from 'node:http';
import { isAppError, type ErrorCode } from '../../errors';
import { xmlDoc } from './xml';
import { lockSentence } from '../lock-sentence';

const S3_CODES = {
  AccessDenied: [403, 'Access Denied'],
  AuthorizationHeaderMalformed: [400, 'The authorization header is malformed.'],
  AuthorizationQueryParametersError: [400, 'The presigned URL is malformed.'],
  BadDigest: [400, 'The Content-MD5 you specified did not match what we received.'],
  BucketAlreadyOwnedByYou: [409, 'Buckets are the storages you can open; this one exists.'],
  BucketNotEmpty: [409, 'Buckets are storages: they are removed in the admin console.'],
  EntityTooLarge: [400, 'Your proposed upload exceeds the maximum allowed size.'],
  EntityTooSmall: [400, 'Your proposed upload is smaller than the minimum allowed object size.'],
  IncompleteBody: [400, 'You did not provide the number of bytes specified by the Content-Length HTTP header.'],
  InternalError: [500, 'We encountered an internal error. Please try again.'],
  InvalidAccessKeyId: [403, 'The access key id you provided does not exist in our records.'],
  InvalidArgument: [400, 'Invalid Argument'],
  InvalidBucketName: [400, 'The specified bucket is not valid.'],
  InvalidDigest: [400, 'The Content-MD5 you specified is not valid.'],
  InvalidObjectName: [400, 'The specified key is not valid.'],
  InvalidPart: [400, 'One or more of the specified parts could not be found.'],
  InvalidPartOrder: [400, 'The list of parts was not in ascending order.'],
  InvalidRange: [416, 'The requested range is not satisfiable'],
  InvalidRequest: [400, 'Invalid Request'],
  InvalidURI: [400, "Couldn't parse the specified URI."],
  KeyTooLongError: [400, 'Your key is too long.'],
  MalformedXML: [400, 'The XML you provided was not well-formed or did not validate against our published schema.'],
  MethodNotAllowed: [405, 'The specified method is not allowed against this resource.'],
  MissingContentLength: [411, 'You must provide the Content-Length HTTP header.'],
  NoSuchBucket: [404, 'The specified bucket does not exist'],
  NoSuchKey: [404, 'The specified key does not exist.'],
  NoSuchUpload: [404, 'The specified multipart upload does not exist.'],
  NotImplemented: [501, 'A header or query you provided implies functionality that is not implemented.'],
  OperationAborted: [409, 'A conflicting operation is in progress against this resource.'],
  PreconditionFailed: [412, 'At least one of the preconditions you specified did not hold.'],
  RequestTimeTooSkewed: [403, "The difference between the request time and the server's time is too large."],
  ServiceUnavailable: [503, 'Reduce your request rate.'],
  SignatureDoesNotMatch: [403, 'The request signature we calculated does not match the signature you provided. Check your key and signing method.'],
  SlowDown: [503, 'Please reduce your request rate.'],
  XAmzContentSHA256Mismatch: [400, "The provided 'x-amz-content-sha256' header does not match what was computed."],
} as const satisfies Record<string, readonly [number, string]>;

export type S3Code = keyof typeof S3_CODES;

/** The S3 answer to each file-service refusal (anything else is InternalError). */
const FROM_APP: Partial<Record<ErrorCode, S3Code>> = {
  not_found: 'NoSuchKey',
  forbidden: 'AccessDenied',
  permission_denied: 'AccessDenied',
  read_only: 'AccessDenied',
  encrypted: 'AccessDenied',
  not_encrypted: 'AccessDenied',
  unauthenticated: 'InvalidAccessKeyId',
  unauthorised: 'AccessDenied',
  account_disabled: 'AccessDenied',
  locked: 'AccessDenied',
  conflict: 'OperationAborted',
  name_taken: 'OperationAborted',
  bad_path: 'InvalidObjectName',
  bad_name: 'InvalidObjectName',
  name_not_allowed: 'InvalidObjectName',
  reserved_name: 'InvalidObjectName',
  name_too_long: 'KeyTooLongError',
  validation_failed: 'InvalidArgument',
  range_not_satisfiable: 'InvalidRange',
  payload_too_large: 'EntityTooLarge',
  quota_exceeded: 'EntityTooLarge',
  insufficient_storage: 'EntityTooLarge',
  storage_unavailable: 'ServiceUnavailable',
  storage_unreachable: 'ServiceUnavailable',
  database_busy: 'SlowDown',
  server_busy: 'SlowDown',
  rate_limited: 'SlowDown',
  unsupported: 'NotImplemented',
  timeout: 'InternalError',
  internal: 'InternalError',
};

/** An S3 refusal: `code` from the table, an optional sentence, and the resource it concerns. */
export class S3Error extends Error {
  constructor(
    readonly code: S3Code,
    message?: string,
    readonly extra: Record<string, string> = {},
  ) {
    super(message ?? S3_CODES[code][1]);
  }

  get status(): number {
    return S3_CODES[this.code][0];
  }
}

/** Any thrown value as an S3Error (AppErrors through the table; the rest is InternalError). */
export function toS3Error(e: unknown): S3Error {
  if (e instanceof S3Error) return e;
  if (isAppError(e)) {
    const code = FROM_APP[e.code] ?? 'InternalError';
    const locked = lockSentence(e);
    if (locked) return new S3Error(code, `${S3_CODES[code][1]}: ${locked}`);
    return new S3Error(code, code === 'InternalError' ? undefined : `${S3_CODES[code][1]} (${e.code})`);
  }
  return new S3Error('InternalError');
}

/** Sends `err` as the response (headers only for HEAD, as S3 does). */
export function sendError(res: ServerResponse, err: S3Error, resource: string, requestId: string, head: boolean): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = head ? '' : xmlDoc('Error', { Code: err.code, Message: err.message, Resource: resource, RequestId: requestId, ...err.extra });
  res.writeHead(err.status, {
    'Content-Type': 'application/xml',
    'Content-Length': Buffer.byteLength(body),
    'x-amz-request-id': requestId,
    ...(err.code === 'SlowDown' || err.code === 'ServiceUnavailable' ? { 'Retry-After': '1' } : {}),
  });
  res.end(body);
}
