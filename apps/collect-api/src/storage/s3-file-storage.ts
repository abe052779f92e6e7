import { createHash, createHmac } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat as fsStat } from 'node:fs/promises';
import { PassThrough, Readable, Transform } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { assertSafeStoragePath, FileNotFoundError, type ByteRange, type FileStorage, type PresignOptions, type StoredFileInfo } from './file-storage.js';

export interface S3StorageOptions {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Key prefix inside the bucket (no trailing slash), e.g. `media`. */
  prefix?: string;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

/** S3-compatible object storage (AWS, MinIO, s3rver in tests). Uploads stream with a known length. */
export class S3FileStorage implements FileStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly options: S3StorageOptions) {
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      // Checksums only where S3 requires them: the default (always, as aws-chunked trailers)
      // is not understood by many S3-compatible stores (s3rver, older MinIO, Ceph).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      credentials: options.accessKeyId && options.secretAccessKey ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } : undefined,
    });
  }

  private key(path: string): string {
    assertSafeStoragePath(path);
    return this.options.prefix ? `${this.options.prefix}/${path}` : path;
  }

  /** Uploads a copy; the local file stays for its owner to remove (FileStorage.moveFile). */
  async moveFile(path: string, localFile: string, contentType: string): Promise<boolean> {
    const { size } = await fsStat(localFile);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: this.key(path), Body: createReadStream(localFile), ContentLength: size, ContentType: contentType }),
    );
    return false;
  }

  async putBytes(path: string, chunks: Buffer[], contentType: string): Promise<void> {
    const data = Buffer.concat(chunks);
    await this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: this.key(path), Body: data, ContentLength: data.length, ContentType: contentType }));
  }

  async putStream(path: string, body: Readable, contentType: string): Promise<number> {
    // PutObject needs a length; buffer-free way: collect to a temp file would be the general
    // answer, but every caller here stores from a temp file (moveFile). Streams of unknown size
    // are only used for small generated files (seed data), so counting into chunks is fine.
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const data = Buffer.concat(chunks);
    await this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: this.key(path), Body: data, ContentLength: data.length, ContentType: contentType }));
    return data.length;
  }

  async read(path: string, range?: ByteRange): Promise<Readable> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(path), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      const raw = out.Body as Readable | undefined;
      if (!raw) return Readable.from([]);
      const body = raw instanceof Readable ? raw : Readable.from(raw as AsyncIterable<Buffer>).pipe(new PassThrough());
      // Some S3-compatible stores ignore a Range they find odd (s3rver drops `bytes=0-0`) and
      // send more than asked (whole object, or `bytes 0-0` read as open-ended): cut the range out ourselves so callers always get
      // exactly the bytes they asked for.
      if (range) {
        const got = /^bytes (\d+)-(\d+)\//.exec(out.ContentRange ?? '');
        const base = got ? Number(got[1]) : 0;
        if (!got || base !== range.start || Number(got[2]) !== range.end) return body.pipe(sliceBytes({ start: range.start - base, end: range.end - base }));
      }
      return body;
    } catch (err) {
      if (isNotFound(err)) throw new FileNotFoundError(path);
      throw err;
    }
  }

  async stat(path: string): Promise<StoredFileInfo | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.key(path) }));
      return { size: Number(out.ContentLength ?? 0), etag: (out.ETag ?? '').replace(/"/g, ''), lastModified: out.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async exists(path: string): Promise<boolean> {
    return (await this.stat(path)) !== null;
  }

  async delete(path: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.key(path) }));
  }

  /**
   * AWS Signature V4 query-string presigning of a GET (what `@aws-sdk/s3-request-presigner`
   * does, without another dependency): credentials come from the client's own provider chain.
   */
  async presignGet(path: string, options: PresignOptions): Promise<string> {
    const key = this.key(path);
    const creds = await this.client.config.credentials();
    const region = this.options.region;
    const base = this.options.endpoint
      ? new URL(this.options.endpoint)
      : new URL(`https://${this.options.forcePathStyle ? `s3.${region}.amazonaws.com` : `${this.options.bucket}.s3.${region}.amazonaws.com`}`);
    const pathStyle = this.options.forcePathStyle || !!this.options.endpoint;
    const prefix = base.pathname.replace(/\/+$/, '');
    return presignS3Get({
      origin: `${base.protocol}//${base.host}`,
      path: pathStyle ? `${prefix}/${this.options.bucket}/${key}` : `${prefix}/${key}`,
      region,
      credentials: creds,
      date: new Date(),
      expiresInSeconds: options.expiresInSeconds,
      query: { 'response-content-disposition': options.contentDisposition, 'response-content-type': options.contentType },
    });
  }

  destroy(): void {
    this.client.destroy();
  }
}

/** SigV4 encoding: everything but unreserved characters, uppercase hex. */
function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Passes bytes start..end (inclusive) of a stream through, and ends after them. */
function sliceBytes(range: ByteRange): Transform {
  let offset = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      const from = Math.max(range.start - offset, 0);
      const to = Math.min(range.end + 1 - offset, chunk.length);
      offset += chunk.length;
      if (to > from) this.push(chunk.subarray(from, to));
      done();
    },
  });
}

/**
 * AWS Signature V4 query-string presigning of an S3 GET (what `@aws-sdk/s3-request-presigner`
 * does, without another dependency). Pure, so it is checked against AWS's published example.
 */
export function presignS3Get(input: {
  origin: string;
  /** Object path as sent (`/bucket/key` or `/key`), not yet encoded. */
  path: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  date: Date;
  expiresInSeconds: number;
  query?: Record<string, string>;
}): string {
  const host = new URL(input.origin).host;
  const canonicalUri = input.path.split('/').map(rfc3986).join('/');
  const amzDate = input.date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${input.region}/s3/aws4_request`;
  const query: Record<string, string> = {
    ...input.query,
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${input.credentials.accessKeyId}/${scope}`,
    'X-Amz-Date': amzDate,
    'X-Amz-Expires': String(input.expiresInSeconds),
    'X-Amz-SignedHeaders': 'host',
  };
  if (input.credentials.sessionToken) query['X-Amz-Security-Token'] = input.credentials.sessionToken;
  const canonicalQuery = Object.keys(query).sort().map((k) => `${rfc3986(k)}=${rfc3986(query[k])}`).join('&');
  const canonicalRequest = ['GET', canonicalUri, canonicalQuery, `host:${host}`, '', 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const hmac = (k: string | Buffer, v: string) => createHmac('sha256', k).update(v).digest();
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${input.credentials.secretAccessKey}`, day), input.region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  return `${input.origin}${canonicalUri}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}
