import type { ContentStore } from '../activities/store/content-store';
import { FileContentStore } from '../activities/store/content-store';
import type { S3StoreAddress } from '../activities/store/s3-content-store';
import { ConfigurationError, storeDir } from './config';

/** The forms `DURABLE_AGENT_STORE` takes, for messages. */
const STORE_FORMS =
  'unset (the folder store under DURABLE_AGENT_HOME), s3://bucket or s3://bucket/prefix (credentials from the ' +
  'usual AWS places: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an instance role)';

/** S3's rule for bucket names (3 to 63 lowercase letters, digits, dots and hyphens). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Where `DURABLE_AGENT_STORE` puts the content store: undefined when it is unset (the folder store
 * under `DURABLE_AGENT_HOME`), else the bucket and prefix of its `s3://bucket[/prefix]` URL.
 * Anything else is a {@link ConfigurationError} naming the forms it takes. Credentials never go in
 * the URL (a worker's environment and its start-up line are not the place for a secret).
 */
export function storeAddressFromEnv(env: NodeJS.ProcessEnv = process.env): S3StoreAddress | undefined {
  const value = env.DURABLE_AGENT_STORE?.trim();
  if (!value) return undefined;
  const match = /^s3:\/\/([^/?#]*)(\/[^?#]*)?([?#].*)?$/i.exec(value);
  if (!match) {
    throw new ConfigurationError(`DURABLE_AGENT_STORE=${redacted(value)} is not a store: use ${STORE_FORMS}.`);
  }
  const [, authority = '', rawPath = '', extra] = match;
  if (authority.includes('@')) {
    throw new ConfigurationError(
      `DURABLE_AGENT_STORE=${redacted(value)} carries credentials, which it must not: use s3://bucket[/prefix] and give ` +
        'the credentials the usual AWS way (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or an instance role).',
    );
  }
  if (extra) {
    throw new ConfigurationError(
      `DURABLE_AGENT_STORE=${value} has a query or fragment, which a store URL does not take: use s3://bucket or ` +
        's3://bucket/prefix (the endpoint of an S3-compatible server goes in AWS_ENDPOINT_URL_S3).',
    );
  }
  if (!BUCKET_NAME.test(authority) || authority.includes('..')) {
    throw new ConfigurationError(
      `DURABLE_AGENT_STORE=${value} does not name a bucket (${authority ? `"${authority}" is not a valid bucket name` : 'none given'}): ` +
        'use s3://bucket or s3://bucket/prefix, with a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens.',
    );
  }
  const segments = rawPath.replace(/^\//, '').replace(/\/$/, '');
  if (segments && segments.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new ConfigurationError(
      `DURABLE_AGENT_STORE=${value} has an empty, "." or ".." part in its prefix: use s3://bucket/a/prefix.`,
    );
  }
  return { bucket: authority, prefix: segments };
}

/**
 * The content store this process uses, as the environment says: the folder `storeDir(env)`, or the
 * S3 bucket of `DURABLE_AGENT_STORE`. Every worker of a job, and the commands that read a job's
 * content (export, resume, batch, prune), must open the same one. The AWS SDK is loaded only for
 * an S3 store (it costs every command that loads it about 80 ms).
 */
export async function openContentStore(env: NodeJS.ProcessEnv = process.env): Promise<ContentStore> {
  const address = storeAddressFromEnv(env);
  if (!address) return new FileContentStore(storeDir(env));
  const { S3ContentStore, s3ClientFromEnv } = await import('../activities/store/s3-content-store');
  const { client, endpoint } = s3ClientFromEnv(env);
  return new S3ContentStore(address, client, endpoint);
}

/** A URL with whatever stands before an `@` of its authority hidden. */
function redacted(value: string): string {
  return value.replace(/^([a-z0-9+.-]+:\/\/)[^/@]*@/i, '$1…@');
}
