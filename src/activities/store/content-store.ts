import { createHash } from 'node:crypto';
import { readFile, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import type { ContentRef } from '../../shared/transcript';
import { ensureDirDurably, writeFileDurably } from './durable-file';

const REF_PATTERN = /^sha256:([0-9a-f]{64})$/;

/** A ref that names no stored content, or content that fails its own hash. */
export class ContentNotFoundError extends Error {
  override readonly name = 'ContentNotFoundError';
  constructor(
    readonly ref: string,
    readonly root: string,
  ) {
    super(
      `Content ${ref} is not in the transcript store at ${root}. Workers of one job must share the store ` +
        `(set DURABLE_AGENT_HOME to the same directory, or a shared volume, on every worker).`,
    );
  }
}

/**
 * Content-addressed JSON storage on the local file system: the home of transcripts and large tool
 * results, so workflow history holds references instead of content. Writes are idempotent (same
 * content, same address), atomic and durable (`writeFileDurably`: a reference handed out names
 * content that survives a power loss).
 */
export class FileContentStore {
  private readonly cache = new Map<ContentRef, unknown>();

  constructor(
    readonly root: string,
    private readonly cacheLimit = 2_000,
  ) {}

  async put(value: unknown): Promise<ContentRef> {
    const body = JSON.stringify(value);
    const hex = createHash('sha256').update(body).digest('hex');
    const ref = `sha256:${hex}`;
    const file = this.fileFor(hex);
    if (!(await this.alreadyStored(file, body))) {
      await ensureDirDurably(path.dirname(file));
      await writeFileDurably(file, body);
    }
    this.remember(ref, JSON.parse(body));
    return ref;
  }

  async get<T>(ref: ContentRef): Promise<T> {
    if (this.cache.has(ref)) return this.cache.get(ref) as T;
    const match = REF_PATTERN.exec(ref);
    if (!match?.[1]) throw new ContentNotFoundError(ref, this.root);
    let body: string;
    try {
      body = await readFile(this.fileFor(match[1]), 'utf8');
    } catch {
      throw new ContentNotFoundError(ref, this.root);
    }
    if (createHash('sha256').update(body).digest('hex') !== match[1]) throw new ContentNotFoundError(ref, this.root);
    const value = JSON.parse(body) as T;
    this.remember(ref, value);
    return value;
  }

  /** When the content was last written here (its file's modification time); undefined if absent. */
  async writtenAt(ref: ContentRef): Promise<Date | undefined> {
    const match = REF_PATTERN.exec(ref);
    if (!match?.[1]) return undefined;
    return (await stat(this.fileFor(match[1])).catch(() => undefined))?.mtime;
  }

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
    return path.join(this.root, 'objects', hex.slice(0, 2), hex.slice(2));
  }

  private remember(ref: ContentRef, value: unknown): void {
    this.cache.set(ref, value);
    if (this.cache.size > this.cacheLimit) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }
}
