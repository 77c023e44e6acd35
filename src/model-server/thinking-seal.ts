/**
 * What makes the server's thinking tamper-evident, as the real API's is: each `thinking` block goes
 * out with a `signature` and each `redacted_thinking` block with `data` that only this server
 * instance can produce, so a block sent back with changed text, a changed or made-up signature, or
 * changed data is refused. Both are opaque base64 strings, never meant to be read by a client.
 *
 * - signature = base64(nonce ‖ HMAC(key, "thinking" ‖ nonce ‖ text))
 * - data      = base64(nonce ‖ payload ‖ HMAC(key, "redacted_thinking" ‖ nonce ‖ payload))
 *
 * The key is random per instance unless given, so a signature from another server never verifies,
 * as one from another account would not.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const NONCE_BYTES = 16;
const MAC_BYTES = 32;

/** Strict base64: only a string that decodes and re-encodes to itself counts. */
function decodeBase64(value: string): Buffer | undefined {
  const bytes = Buffer.from(value, 'base64');
  return bytes.length > 0 && bytes.toString('base64') === value ? bytes : undefined;
}

/** Signs and checks the thinking one server sends. */
export class ThinkingSeal {
  private readonly key: Buffer;

  /** `key`: any string, for servers that must accept each other's thinking; default random. */
  constructor(key?: string) {
    this.key = key === undefined ? randomBytes(32) : Buffer.from(key, 'utf8');
  }

  /** The `signature` of a thinking block whose text is `thinking`. */
  sign(thinking: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    return Buffer.concat([nonce, this.mac('thinking', nonce, Buffer.from(thinking, 'utf8'))]).toString('base64');
  }

  /** True when `signature` was made by {@link sign} for exactly this text. */
  verify(thinking: string, signature: string): boolean {
    const bytes = decodeBase64(signature);
    if (bytes?.length !== NONCE_BYTES + MAC_BYTES) return false;
    const nonce = bytes.subarray(0, NONCE_BYTES);
    return timingSafeEqual(bytes.subarray(NONCE_BYTES), this.mac('thinking', nonce, Buffer.from(thinking, 'utf8')));
  }

  /** The `data` of a redacted_thinking block carrying `payload` (the script's data). */
  seal(payload: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const body = Buffer.from(payload, 'utf8');
    return Buffer.concat([nonce, body, this.mac('redacted_thinking', nonce, body)]).toString('base64');
  }

  /** True when `data` was made by {@link seal} and is unchanged. */
  verifySealed(data: string): boolean {
    const bytes = decodeBase64(data);
    if (!bytes || bytes.length < NONCE_BYTES + MAC_BYTES) return false;
    const nonce = bytes.subarray(0, NONCE_BYTES);
    const body = bytes.subarray(NONCE_BYTES, bytes.length - MAC_BYTES);
    return timingSafeEqual(bytes.subarray(bytes.length - MAC_BYTES), this.mac('redacted_thinking', nonce, body));
  }

  private mac(kind: string, nonce: Buffer, body: Buffer): Buffer {
    return createHmac('sha256', this.key).update(kind).update('\0').update(nonce).update(body).digest();
  }
}
