/**
 * The payload converter of the worker and of the workflow bundle: the SDK's default, except that a
 * payload it cannot decode becomes a value every signal handler refuses, instead of an error.
 *
 * Any Temporal client may signal a job, with any metadata: `temporal workflow signal --input-meta
 * encoding=binary/unknown` made the SDK throw while decoding the signal's arguments, before any
 * handler ran, which failed every workflow task of the job for good (later approvals and aborts did
 * nothing; only `terminate` ended it, with no Terminal). Now the handler gets an
 * {@link UndecodablePayload}, refuses it with a notice that says why, and the job goes on. Only
 * payloads from outside can be undecodable (everything this project writes is the default's JSON),
 * so only the workflow's own payloads (signal, query, update and start arguments) are tolerated:
 * an activity's that cannot be decoded still fails, as with the default converter.
 * Free of Node built-ins: the workflow bundle loads it (`payloadConverterPath`).
 */
import { DefaultPayloadConverter, type Payload } from '@temporalio/common';

/** What a payload that could not be decoded turns into. */
export interface UndecodablePayload {
  undecodablePayload: string;
}

export function isUndecodablePayload(value: unknown): value is UndecodablePayload {
  return (
    typeof value === 'object' && value !== null && typeof (value as UndecodablePayload).undecodablePayload === 'string'
  );
}

class TolerantPayloadConverter extends DefaultPayloadConverter {
  override fromPayload<T>(payload: Payload, ...rest: unknown[]): T {
    try {
      return (super.fromPayload as (payload: Payload, ...rest: unknown[]) => T)(payload, ...rest);
    } catch (error) {
      // An activity's arguments and results are this project's own: one that cannot be decoded is
      // a fault, which must stop the workflow task rather than feed it a stand-in value.
      if ((rest[0] as { type?: string } | undefined)?.type === 'activity') throw error;
      const encoding = payload.metadata?.encoding;
      const name = encoding ? new TextDecoder().decode(encoding).slice(0, 100) : '(none)';
      const reason = error instanceof Error ? error.message.slice(0, 200) : String(error).slice(0, 200);
      const undecodable: UndecodablePayload = {
        undecodablePayload: `encoding ${JSON.stringify(name)}, ${payload.data?.length ?? 0} bytes: ${reason}`,
      };
      return undecodable as T;
    }
  }
}

export const payloadConverter = new TolerantPayloadConverter();
