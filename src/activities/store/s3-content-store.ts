import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  paginateListObjectsV2,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { ContentRef } from '../../shared/transcript';
import { ContentCache } from './content-cache';
import type { ContentStore } from './content-store';
import {
  ContentNotFoundError,
  DEFAULT_CACHE_LIMIT,
  encodeContent,
  hexOfRef,
  objectKey,
  sha256Hex,
} from './content-store';

/** Where in S3 a store is: a bucket, and a prefix inside it ('' for the bucket's root). */
export interface S3StoreAddress {
  bucket: string;
  /** Without leading or trailing slash. */
  prefix: string;
}

/** An object of the store as a listing shows it. */
export interface S3StoredObject {
  hex: string;
  lastModified: Date;
  size: number;
}

/** The store cannot be used as configured: the message says what is wrong and what to change. */
export class ContentStoreUnavailableError extends Error {
  override readonly name = 'ContentStoreUnavailableError';
  constructor(
    message: string,
    readonly location: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const OBJECT_KEY_TAIL = /objects\/([0-9a-f]{2})\/([0-9a-f]{62})$/;

/** Gives up on a connection this much sooner than the SDK's default of never. */
const CONNECTION_TIMEOUT_MS = 5_000;
/** A request that sends nothing back for this long is retried. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * The S3 client of an S3 store, configured from `env` the way the AWS tools are:
 * credentials from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, else the SDK's
 * chain (`AWS_PROFILE`, the shared config and credentials files, SSO, container and instance roles);
 * the endpoint of an S3-compatible server from `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`, with
 * path-style addressing (SeaweedFS and MinIO need it); the region from `AWS_REGION` or the shared
 * config, else us-east-1. (An `endpoint_url` in the shared config file is still the SDK's to
 * honour, but addressed virtual-host style: name an S3-compatible server in the environment.)
 */
export function s3ClientFromEnv(env: NodeJS.ProcessEnv): { client: S3Client; endpoint?: string } {
  quietNodeVersionNotice();
  const endpoint = s3EndpointFromEnv(env);
  const region = env.AWS_REGION?.trim() || regionFromChainOr('us-east-1');
  // Read here rather than by the SDK from process.env: a worker takes secrets out of its own
  // environment at start (see secret-handoff.ts), and a launcher hands them over in `env`.
  const credentials = staticCredentials(env);
  const client = new S3Client({
    region,
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    ...(credentials ? { credentials } : {}),
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
  });
  return { client, ...(endpoint ? { endpoint } : {}) };
}

/** The endpoint the SDK would take from the environment, unless told to ignore configured ones. */
export function s3EndpointFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.trim().toLowerCase() === 'true') return undefined;
  return env.AWS_ENDPOINT_URL_S3?.trim() || env.AWS_ENDPOINT_URL?.trim() || undefined;
}

interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

function staticCredentials(env: NodeJS.ProcessEnv): StaticCredentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = env.AWS_SESSION_TOKEN?.trim();
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/** The region of the SDK's chain (the shared config's `region`), or `fallback` where it has none. */
function regionFromChainOr(fallback: string): () => Promise<string> {
  const chain = new S3Client({}).config.region;
  return () => chain().catch(() => fallback);
}

/**
 * Node 20 is supported by durable-agent (package.json `engines`); the SDK's notice that its own
 * releases of 2027 will not be would otherwise be printed by every command that opens the store.
 */
function quietNodeVersionNotice(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

/**
 * The content store in an S3 bucket (or any S3-compatible server: SeaweedFS, MinIO), shared by
 * workers on any number of machines. Objects are laid out as on disk, under the prefix:
 * `<prefix>/objects/<2 hex>/<62 hex>`. A put always writes the object, which is atomic in S3 and
 * refreshes its LastModified (a sweep spares content stored again lately); a get checks the
 * content against its address.
 */
export class S3ContentStore implements ContentStore {
  readonly location: string;
  private readonly cache: ContentCache;

  constructor(
    readonly address: S3StoreAddress,
    private readonly client: S3Client,
    private readonly endpoint?: string,
    cacheLimit = DEFAULT_CACHE_LIMIT,
  ) {
    this.cache = new ContentCache(cacheLimit);
    const url = `s3://${address.bucket}${address.prefix ? `/${address.prefix}` : ''}`;
    this.location = endpoint ? `${url} (at ${endpoint})` : url;
  }

  async put(value: unknown): Promise<ContentRef> {
    const { body, hex, ref } = encodeContent(value);
    await this.attempt(() =>
      this.client.send(
        new PutObjectCommand({
          Bucket: this.address.bucket,
          Key: this.keyOf(hex),
          Body: body,
          ContentType: 'application/json',
        }),
      ),
    );
    this.cache.remember(ref, JSON.parse(body));
    return ref;
  }

  async get<T>(ref: ContentRef): Promise<T> {
    if (this.cache.has(ref)) return this.cache.get(ref) as T;
    const hex = hexOfRef(ref);
    if (!hex) throw new ContentNotFoundError(ref, this.location);
    const body = await this.readText(hex);
    if (body === undefined || sha256Hex(body) !== hex) throw new ContentNotFoundError(ref, this.location);
    const value = JSON.parse(body) as T;
    this.cache.remember(ref, value);
    return value;
  }

  async writtenAt(ref: ContentRef): Promise<Date | undefined> {
    const hex = hexOfRef(ref);
    if (!hex) return undefined;
    return this.lastModified(hex);
  }

  /**
   * Reach the bucket with this store's credentials: a listing of the prefix, the one request that
   * tells a missing bucket from refused credentials (a HEAD's error has no body to say which).
   */
  async check(): Promise<void> {
    await this.attempt(() =>
      this.client.send(
        new ListObjectsV2Command({ Bucket: this.address.bucket, Prefix: this.objectsPrefix(), MaxKeys: 1 }),
      ),
    );
  }

  /** The stored text of an object, as it is (unchecked); undefined when there is none. */
  async readText(hex: string): Promise<string | undefined> {
    try {
      const reply = await this.client.send(new GetObjectCommand({ Bucket: this.address.bucket, Key: this.keyOf(hex) }));
      return (await reply.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw this.unavailable(error);
    }
  }

  /** When the object was last written; undefined when there is none. */
  async lastModified(hex: string): Promise<Date | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.address.bucket, Key: this.keyOf(hex) }));
      return head.LastModified;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw this.unavailable(error);
    }
  }

  /** Every object under the prefix, page by page (ListObjectsV2); keys of another layout are skipped. */
  async *objects(): AsyncGenerator<S3StoredObject> {
    const pages = paginateListObjectsV2(
      { client: this.client },
      { Bucket: this.address.bucket, Prefix: this.objectsPrefix() },
    );
    try {
      for await (const page of pages) {
        for (const entry of page.Contents ?? []) {
          const match = entry.Key ? OBJECT_KEY_TAIL.exec(entry.Key) : null;
          if (!match || entry.Key !== this.keyOf(`${match[1]}${match[2]}`)) continue;
          yield {
            hex: `${match[1]}${match[2]}`,
            lastModified: entry.LastModified ?? new Date(0),
            size: entry.Size ?? 0,
          };
        }
      }
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  async remove(hex: string): Promise<void> {
    await this.attempt(() =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.address.bucket, Key: this.keyOf(hex) })),
    );
  }

  private keyOf(hex: string): string {
    return `${this.address.prefix ? `${this.address.prefix}/` : ''}${objectKey(hex)}`;
  }

  private objectsPrefix(): string {
    return `${this.address.prefix ? `${this.address.prefix}/` : ''}objects/`;
  }

  private async attempt<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  /** An SDK error as one line that says what is wrong with the store's configuration and how to fix it. */
  private unavailable(error: unknown): ContentStoreUnavailableError {
    const what = `the content store ${this.location}`;
    const where = this.endpoint ?? 'AWS S3';
    const { name, code, status, message } = facts(error);
    let text: string;
    if (name === 'NoSuchBucket') {
      text =
        `${what} cannot be used: the bucket ${this.address.bucket} does not exist at ${where}. Create it ` +
        `(e.g. \`aws s3 mb s3://${this.address.bucket}\`), or set DURABLE_AGENT_STORE to a bucket that exists.`;
    } else if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(message)) {
      text =
        `${what} cannot be used: no AWS credentials were found (${message}). Set AWS_ACCESS_KEY_ID and ` +
        'AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run where an instance or container role provides them.';
    } else if (CREDENTIAL_ERRORS.has(name) || status === 401 || status === 403) {
      text =
        `${what} cannot be used: ${where} refused the credentials (${name}${message && message !== name ? `: ${message}` : ''}). ` +
        'Give this process credentials that may list, read and write the bucket (AWS_ACCESS_KEY_ID and ' +
        'AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or a role), and check AWS_REGION.';
    } else if (code && NETWORK_ERRORS.has(code)) {
      text =
        `${what} cannot be used: ${where} cannot be reached (${code}). Check AWS_ENDPOINT_URL_S3 (or ` +
        'AWS_ENDPOINT_URL) and that the server is up.';
    } else if (name === 'TimeoutError' || code === 'ETIMEDOUT' || /timed? ?out/i.test(message)) {
      text = `${what} cannot be used: ${where} did not answer in time (${message || name}). Check the endpoint and the network.`;
    } else {
      text = `${what} failed: ${name}${message && message !== name ? `: ${message}` : ''}${status ? ` (HTTP ${status})` : ''}.`;
    }
    return new ContentStoreUnavailableError(text, this.location, { cause: error });
  }
}

const CREDENTIAL_ERRORS: ReadonlySet<string> = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'ExpiredToken',
  'InvalidToken',
  'TokenRefreshRequired',
  'Forbidden',
]);

const NETWORK_ERRORS: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

function isMissing(error: unknown): boolean {
  const { name, status } = facts(error);
  return name === 'NoSuchKey' || (name === 'NotFound' && status === 404);
}

function facts(error: unknown): { name: string; code?: string; status?: number; message: string } {
  const e = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    cause?: { code?: unknown };
    $metadata?: { httpStatusCode?: unknown };
  };
  const message = typeof e?.message === 'string' ? (e.message.split('\n')[0] ?? '').trim() : String(error);
  // A socket error keeps its code; one the SDK wrapped (an error of another realm) has it in the message.
  const code =
    [e?.code, e?.cause?.code].find((value): value is string => typeof value === 'string') ??
    /\b(E[A-Z]{4,})\b/.exec(message)?.[1];
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    ...(code ? { code } : {}),
    ...(typeof e?.$metadata?.httpStatusCode === 'number' ? { status: e.$metadata.httpStatusCode } : {}),
    message,
  };
}
