import type { ContentRef } from '../../shared/transcript';

/**
 * The values a store read or wrote lately, by reference, least recently used first out. Content
 * under one address never changes, so nothing here goes stale.
 */
export class ContentCache {
  private readonly values = new Map<ContentRef, unknown>();

  constructor(private readonly limit: number) {}

  has(ref: ContentRef): boolean {
    return this.values.has(ref);
  }

  get(ref: ContentRef): unknown {
    const value = this.values.get(ref);
    // Taken again: it moves to the young end.
    this.values.delete(ref);
    this.values.set(ref, value);
    return value;
  }

  remember(ref: ContentRef, value: unknown): void {
    this.values.delete(ref);
    this.values.set(ref, value);
    if (this.values.size > this.limit) {
      const oldest = this.values.keys().next().value;
      if (oldest !== undefined) this.values.delete(oldest);
    }
  }
}
