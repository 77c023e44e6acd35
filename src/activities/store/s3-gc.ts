import type { ObjectReader, Marked, SweepOptions, SweepReport } from './gc';
import { add, tally } from './gc';
import type { S3ContentStore } from './s3-content-store';

/** The mark's reader of an S3 store's objects: read through the store, unchecked. */
export function s3ObjectReader(store: S3ContentStore): ObjectReader {
  return async (hex) => {
    const text = await store.readText(hex);
    return text === undefined ? 'missing' : { text };
  };
}

/**
 * Sweep of an S3 store: list `<prefix>/objects/` (ListObjectsV2, page by page) and delete every
 * object that is not marked and was last written (LastModified) before the cutoff.
 *
 * The race with a put of the same content: a new job may store again, at this moment, content
 * that sat unreachable for longer than the age (the same system prompt, the same tool output). The
 * folder store's sweep closes it by moving the object out of writers' reach before its last look;
 * S3 has no such move, and a delete conditional on the ETag cannot tell the new copy from the old
 * (same bytes, same ETag). So each candidate's LastModified is read again (HeadObject) right
 * before its DeleteObject, and one that was stored again since the listing is kept. What is left
 * is the window between that HeadObject and the DeleteObject, one round trip: a put of that very
 * content landing inside it is undone. The job that stored it then fails its next read of it with a
 * ContentNotFoundError (a get checks every object against its address), never goes on with other
 * content; LastModified is the server's clock, so only a skew larger than the age could widen it.
 */
export async function sweepS3Objects(
  store: S3ContentStore,
  marked: Marked,
  options: SweepOptions,
): Promise<SweepReport> {
  const report: SweepReport = { removed: tally(), live: tally(), recent: tally(), abandoned: tally() };
  for await (const object of store.objects()) {
    if (marked.objects.has(object.hex)) add(report.live, object.size);
    else if (object.lastModified.getTime() >= options.cutoffMs) add(report.recent, object.size);
    else if (options.dryRun) add(report.removed, object.size);
    else {
      const lastModified = await store.lastModified(object.hex);
      // Gone meanwhile: another sweep took it.
      if (lastModified === undefined) continue;
      if (lastModified.getTime() >= options.cutoffMs) {
        add(report.recent, object.size);
        continue;
      }
      await store.remove(object.hex);
      add(report.removed, object.size);
    }
  }
  return report;
}
