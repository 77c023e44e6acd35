/**
 * Promises that settle when some server state becomes true, with a timeout. Every pending timer
 * is cleared on settle or on `rejectAll`, so a closed server leaves no handle for jest to find.
 */

interface Pending {
  probe: () => boolean;
  settle: (error?: Error) => void;
}

/** A set of "resolve once this holds" waits, re-checked whenever the owner calls `notify()`. */
export class Waiters {
  private readonly pending = new Set<Pending>();
  private closedError: Error | undefined;

  /**
   * Resolve with `probe()` once it returns something other than undefined; reject with
   * `describe()` after `timeoutMs`.
   */
  wait<T>(probe: () => T | undefined, timeoutMs: number, describe: () => string): Promise<T> {
    const now = probe();
    if (now !== undefined) return Promise.resolve(now);
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise<T>((resolve, reject) => {
      let value: T | undefined;
      const entry: Pending = {
        probe: () => (value = probe()) !== undefined,
        settle: (error) => {
          clearTimeout(timer);
          this.pending.delete(entry);
          if (error) reject(error);
          else resolve(value as T);
        },
      };
      const timer = setTimeout(() => entry.settle(new Error(describe())), timeoutMs);
      this.pending.add(entry);
    });
  }

  /** Re-check every pending wait; call after each state change. */
  notify(): void {
    for (const entry of [...this.pending]) if (entry.probe()) entry.settle();
  }

  /** Reject every pending wait and any later one that is not already satisfied. */
  rejectAll(error: Error): void {
    this.closedError = error;
    for (const entry of [...this.pending]) entry.settle(error);
  }
}
