import { createHash } from 'node:crypto';
import { readFile, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import type { ContentRef } from '../../shared/transcript';
import { ContentCache } from './content-cache';
import { ensureDirDurably, writeFileDurably } from './durable-file';

const REF_PATTERN = /^sha256:([0-9a-f]{64})$/;

/** How many values a store keeps in memory by default. */
export const DEFAULT_CACHE_LIMIT = 2_000;

/**
 * Content-addressed JSON storage: the home of transcripts, large tool results and system prompts,
 * so workflow history holds references instead of content. Every worker of a job and every command
 * that reads a job's content (export, resume, batch, prune) must use the same one.
 */
export interface ContentStore {
  /** Where the content is, for messages: a folder, or an `s3://` URL. */
  readonly location: string;
  /** Store `value` as JSON; the same value always gets the same ref, and storing it again refreshes its age. */
  put(value: unknown): Promise<ContentRef>;
  /** The value stored under `ref`; a {@link ContentNotFoundError} when absent or not intact. */
  get<T>(ref: ContentRef): Promise<T>;
  /** When the content was last stored; undefined if absent. */
  writtenAt(ref: ContentRef): Promise<Date | undefined>;
  /** Fail with a message saying what to fix when the store cannot be used (a worker checks at start). */
  check(): Promise<void>;
}

/** A ref that names no stored content, or content that fails its own hash. */
export class ContentNotFoundError extends Error {
  override readonly name = 'ContentNotFoundError';
  constructor(
    readonly ref: string,
    readonly location: string,
  ) {
    super(
      `Content ${ref} is not in the transcript store at ${location}. The workers of a job must share one store: ` +
        'set DURABLE_AGENT_STORE to the same s3:// URL on every worker, or share DURABLE_AGENT_HOME (one ' +
        'machine, or a shared volume).',
    );
  }
}

/** The JSON of `value`, its digest and its ref. */
export function encodeContent(value: unknown): { body: string; hex: string; ref: ContentRef } {
  const body = JSON.stringify(value);
  const hex = sha256Hex(body);
  return { body, hex, ref: `sha256:${hex}` };
}

/** The hex digest a well-formed ref names; undefined for anything else. */
export function hexOfRef(ref: ContentRef): string | undefined {
  return REF_PATTERN.exec(ref)?.[1];
}

export function sha256Hex(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

/** Where an object lives below a store's root or prefix: `objects/<2 hex>/<62 hex>`. */
export function objectKey(hex: string): string {
  return `objects/${hex.slice(0, 2)}/${hex.slice(2)}`;
}

/**
 * The content store on the local file system (`<DURABLE_AGENT_HOME>/store`). Writes are idempotent
 * (same content, same address), atomic and durable (`writeFileDurably`: a reference handed out
 * names content that survives a power loss).
 */
export class FileContentStore implements ContentStore {
  private readonly cache: ContentCache;

  constructor(
    readonly root: string,
    cacheLimit = DEFAULT_CACHE_LIMIT,
  ) {
    this.cache = new ContentCache(cacheLimit);
  }

  get location(): string {
    return this.root;
  }

  async put(value: unknown): Promise<ContentRef> {
    const { body, hex, ref } = encodeContent(value);
    const file = this.fileFor(hex);
    if (!(await this.alreadyStored(file, body))) {
      await ensureDirDurably(path.dirname(file));
      await writeFileDurably(file, body);
    }
    this.cache.remember(ref, JSON.parse(body));
    return ref;
  }

  async get<T>(ref: ContentRef): Promise<T> {
    if (this.cache.has(ref)) return this.cache.get(ref) as T;
    const hex = hexOfRef(ref);
    if (!hex) throw new ContentNotFoundError(ref, this.root);
    let body: string;
    try {
      body = await readFile(this.fileFor(hex), 'utf8');
    } catch {
      throw new ContentNotFoundError(ref, this.root);
    }
    if (sha256Hex(body) !== hex) throw new ContentNotFoundError(ref, this.root);
    const value = JSON.parse(body) as T;
    this.cache.remember(ref, value);
    return value;
  }

  /** When the content was last written here (its file's modification time); undefined if absent. */
  async writtenAt(ref: ContentRef): Promise<Date | undefined> {
    const hex = hexOfRef(ref);
    if (!hex) return undefined;
    return (await stat(this.fileFor(hex)).catch(() => undefined))?.mtime;
  }

  /** A folder is made when the first object is written; nothing can be known before. */
  async check(): Promise<void> {}

  /**
   * True when `file` already holds `body`; its modification time is then refreshed, as a rewrite
   * would, since a sweep spares what was stored again lately. An object written by an older worker
   * without fsync may have been torn by a crash: only intact content counts.
   */
  private async alreadyStored(file: string, body: string): Promise<boolean> {
    const existing = await readFile(file, 'utf8').catch(() => undefined);
    if (existing !== body) return false;
    const now = new Date();
    // Gone since (a sweep took it): written anew.
    return utimes(file, now, now).then(
      () => true,
      () => false,
    );
  }

  private fileFor(hex: string): string {
    return path.join(this.root, ...objectKey(hex).split('/'));
  }
}
