/**
 * The API's checks of image and document blocks (at the top of a user message or inside a
 * tool_result): a base64 source with an accepted media type, data that is base64, an image whose
 * bytes are what its media type says and at most 5 MB, and a PDF that is one.
 */

import { imageFormat, imageProblem } from '../shared/image-check';

type Json = Record<string, unknown>;

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
/** Largest image the API takes, counted in base64 characters. */
const MAX_IMAGE_BASE64 = 5 * 1024 * 1024;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkImage(block: Json, where: string): string | undefined {
  const source = block.source;
  if (!isObject(source)) return `${where}.image.source: Field required`;
  // URL and file sources are fetched by the API; this server cannot, and takes them as given.
  if (source.type !== 'base64') return undefined;
  if (typeof source.media_type !== 'string' || !IMAGE_TYPES.includes(source.media_type)) {
    return `${where}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
  }
  if (typeof source.data !== 'string' || source.data === '' || !BASE64.test(source.data)) {
    return `${where}.image.source.base64.data: Invalid base64 data`;
  }
  if (source.data.length > MAX_IMAGE_BASE64) {
    return `${where}.image.source.base64: image exceeds 5 MB maximum: ${source.data.length} bytes > ${MAX_IMAGE_BASE64} bytes`;
  }
  const bytes = Buffer.from(source.data, 'base64');
  const actual = imageFormat(bytes);
  if (actual !== source.media_type) {
    return `${where}.image.source.base64.data: Image does not match the provided media type ${source.media_type}`;
  }
  if (imageProblem(bytes, actual)) return 'Could not process image';
  return undefined;
}

function checkDocument(block: Json, where: string): string | undefined {
  const source = block.source;
  if (!isObject(source)) return `${where}.document.source: Field required`;
  if (source.type !== 'base64') return undefined;
  if (source.media_type !== 'application/pdf') {
    return `${where}.document.source.base64.media_type: Input should be 'application/pdf'`;
  }
  if (typeof source.data !== 'string' || source.data === '' || !BASE64.test(source.data)) {
    return `${where}.document.source.base64.data: Invalid base64 data`;
  }
  if (Buffer.from(source.data.slice(0, 8), 'base64').subarray(0, 5).toString('latin1') !== '%PDF-') {
    return `${where}.document.source.base64.data: The PDF specified was not valid.`;
  }
  return undefined;
}

function checkBlock(block: unknown, where: string): string | undefined {
  if (!isObject(block)) return undefined;
  if (block.type === 'image') return checkImage(block, where);
  if (block.type === 'document') return checkDocument(block, where);
  return undefined;
}

/** The first image or document block the API would refuse, with its path; undefined if none. */
export function checkMediaBlocks(messages: Json[]): string | undefined {
  for (const [i, message] of messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    for (const [j, block] of (message.content as unknown[]).entries()) {
      const where = `messages.${i}.content.${j}`;
      const problem = checkBlock(block, where);
      if (problem) return problem;
      if (isObject(block) && block.type === 'tool_result' && Array.isArray(block.content)) {
        for (const [k, inner] of (block.content as unknown[]).entries()) {
          const nested = checkBlock(inner, `${where}.content.${k}`);
          if (nested) return nested;
        }
      }
    }
  }
  return undefined;
}
