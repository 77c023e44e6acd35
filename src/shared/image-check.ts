/**
 * What the Messages API needs of an image before it will look at it: one of its four formats, the
 * file whole (not cut short), and at most 8000 pixels a side. Read checks a file with this before
 * sending it, and the scripted model server refuses what the API would: an image the API cannot
 * process fails the request, and with it every later request of the conversation.
 */

export type ImageFormat = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** Longest side, in pixels, the API takes. */
export const MAX_IMAGE_SIDE = 8000;

/** The format the bytes are in, by their signature (a file's extension may lie). */
export function imageFormat(bytes: Uint8Array): ImageFormat | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

/**
 * Why the API could not process this image (damaged, cut short, too large a side), or undefined
 * when it looks whole. A structural check of the container, not a decoder.
 */
export function imageProblem(bytes: Uint8Array, format: ImageFormat): string | undefined {
  const size = dimensions(bytes, format);
  if (!size) return 'it is damaged or cut short';
  if (size.width === 0 || size.height === 0) return 'it has no pixels';
  if (size.width > MAX_IMAGE_SIDE || size.height > MAX_IMAGE_SIDE) {
    return `it is ${size.width}x${size.height} pixels; at most ${MAX_IMAGE_SIDE} pixels a side can be sent`;
  }
  return undefined;
}

function dimensions(bytes: Uint8Array, format: ImageFormat): { width: number; height: number } | undefined {
  const u16be = (at: number) => ((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0);
  const u16le = (at: number) => (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8);
  const u32be = (at: number) => u16be(at) * 65536 + u16be(at + 2);
  const u32le = (at: number) => u16le(at) + u16le(at + 2) * 65536;
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  const n = bytes.length;
  switch (format) {
    case 'image/png':
      // IHDR first, IEND (with its CRC) last.
      if (n < 45 || ascii(12, 16) !== 'IHDR' || ascii(n - 8, n - 4) !== 'IEND') return undefined;
      return { width: u32be(16), height: u32be(20) };
    case 'image/gif':
      // The trailer byte ends every complete GIF.
      if (n < 14 || bytes[n - 1] !== 0x3b) return undefined;
      return { width: u16le(6), height: u16le(8) };
    case 'image/webp': {
      // The RIFF size covers the whole file.
      if (n < 30 || u32le(4) + 8 > n) return undefined;
      const chunk = ascii(12, 16);
      if (chunk === 'VP8X') return { width: 1 + (u32le(24) & 0xffffff), height: 1 + (u32le(27) & 0xffffff) };
      if (chunk === 'VP8L') {
        const bits = u32le(21);
        return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
      }
      if (chunk === 'VP8 ') return { width: u16le(26) & 0x3fff, height: u16le(28) & 0x3fff };
      return undefined;
    }
    case 'image/jpeg': {
      // Ends with EOI; the size is in the first start-of-frame segment.
      if (n < 4 || bytes[n - 2] !== 0xff || bytes[n - 1] !== 0xd9) return undefined;
      let at = 2;
      while (at + 9 < n) {
        if (bytes[at] !== 0xff) return undefined;
        const marker = bytes[at + 1] ?? 0;
        if (marker === 0xff) {
          at++;
          continue;
        }
        const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
        if (isFrame) return { width: u16be(at + 7), height: u16be(at + 5) };
        at += 2 + u16be(at + 2);
      }
      return undefined;
    }
  }
}
