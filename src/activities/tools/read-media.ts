import type { FileHandle } from 'node:fs/promises';
import { imageFormat, imageProblem } from '../../shared/image-check';
import type { ToolResultContentBlock } from '../../shared/messages';
import type { ToolOutcome } from '../../shared/tool-definition';
import { parsePageRange } from '../../shared/tools/read-pages';
import { formatFileSize } from './file-size';
import { describeFsError, toolError } from './fs-errors';
import { renderNotebook } from './read-notebook';

const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp']);
/** The API takes an image of at most 5 MB (of base64 text): this many bytes of file. */
export const READ_MAX_IMAGE_BYTES = Math.floor((5 * 1024 * 1024 * 3) / 4);
/** A PDF larger than this is refused: base64 makes it a third larger, and a request holds 32 MB. */
export const READ_MAX_PDF_BYTES = 20 * 1024 * 1024;
/** The API reads PDFs of at most this many pages. */
export const READ_MAX_PDF_PAGES_TOTAL = 100;
/** A notebook's JSON larger than this is refused, as a text file over Read's size limit is. */
const READ_MAX_NOTEBOOK_BYTES = 10 * 1024 * 1024;

/**
 * Read an image, a PDF or a notebook in the form the model can take in: an image or document block,
 * or the notebook's cells. Undefined for any other file (Read shows it as text).
 */
export async function readMedia(
  handle: FileHandle,
  size: number,
  shown: string,
  absolute: string,
  pages: string | undefined,
): Promise<ToolOutcome | undefined> {
  const extension = shown.slice(shown.lastIndexOf('.') + 1).toLowerCase();
  const kind = IMAGE_EXTENSIONS.has(extension)
    ? 'image'
    : extension === 'pdf'
      ? 'pdf'
      : extension === 'ipynb'
        ? 'notebook'
        : undefined;
  if (kind === undefined || !shown.includes('.')) return undefined;
  const limit = kind === 'image' ? READ_MAX_IMAGE_BYTES : kind === 'pdf' ? READ_MAX_PDF_BYTES : READ_MAX_NOTEBOOK_BYTES;
  if (size > limit) {
    return toolError(
      `${shown} is too large to read (${formatFileSize(size)}; at most ${formatFileSize(limit)} for ${kind === 'image' ? 'an image' : kind === 'pdf' ? 'a PDF' : 'a notebook'}). ` +
        (kind === 'notebook'
          ? `Read its cells in parts with Bash, e.g. jq '.cells[0:20]' ${shown}.`
          : 'Make a smaller copy with a shell command (e.g. convert or qpdf), then read that.'),
    );
  }
  let bytes: Buffer;
  try {
    bytes = await readWhole(handle, size);
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }
  if (kind === 'image') return readImage(bytes, shown, absolute);
  if (kind === 'pdf') return readPdf(bytes, shown, pages);
  return renderNotebook(bytes.toString('utf8'), shown);
}

async function readWhole(handle: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.alloc(size);
  let offset = 0;
  while (offset < size) {
    const { bytesRead } = await handle.read(buffer, offset, size - offset, offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
  return buffer.subarray(0, offset);
}

function readImage(bytes: Buffer, shown: string, absolute: string): ToolOutcome {
  const mediaType = imageFormat(bytes);
  if (!mediaType) {
    const hex = [...bytes.subarray(0, 8)].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
    return toolError(
      `File has an image extension but its content is not a valid PNG/JPEG/GIF/WebP. Detected: unrecognized bytes (hex: ${hex}). ` +
        `This usually means a download saved an error/login page instead of the image. Use \`file "${absolute}"\` to confirm, or read it as text with Bash (e.g. \`head -c 500\`).`,
    );
  }
  const problem = imageProblem(bytes, mediaType);
  if (problem) {
    return toolError(
      `${shown} cannot be sent as an image: ${problem}. Look at it with Bash (e.g. \`file ${shown}\`), or make a smaller or repaired copy (e.g. with convert) and read that.`,
    );
  }
  const data = bytes.toString('base64');
  return {
    content: `[image: ${mediaType}, ${formatFileSize(bytes.length)}]`,
    isError: false,
    blocks: [{ type: 'image', source: { type: 'base64', media_type: mediaType, data } }],
  };
}

/**
 * A PDF as a document block. `pages` is checked but not applied: choosing pages needs a PDF
 * library, so the whole document is attached and the text says which pages were asked for.
 */
function readPdf(bytes: Buffer, shown: string, pages: string | undefined): ToolOutcome {
  if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') {
    return toolError(
      `${shown} has a .pdf extension but is not a PDF (it does not start with %PDF-). Look at it with Bash (e.g. \`file ${shown}\` or \`head -c 500 ${shown}\`).`,
    );
  }
  const pageCount = countPdfPages(bytes);
  if (pageCount !== undefined && pageCount > READ_MAX_PDF_PAGES_TOTAL) {
    return toolError(
      `${shown} has about ${pageCount} pages; a PDF of more than ${READ_MAX_PDF_PAGES_TOTAL} pages cannot be read whole, and choosing pages is not supported here. Extract the pages you need with a shell command (e.g. qpdf --pages), then read that file.`,
    );
  }
  const range = pages === undefined ? undefined : parsePageRange(pages);
  const asked = range
    ? ` The whole document is attached: choosing pages is not supported here, so look at page${range.first === range.last ? ` ${range.first}` : `s ${range.first}-${range.last}`} in it.`
    : '';
  const blocks: ToolResultContentBlock[] = [
    { type: 'text', text: `PDF file read: ${shown} (${formatFileSize(bytes.length)})${asked}` },
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: bytes.toString('base64') } },
  ];
  return { content: (blocks[0] as { text: string }).text, isError: false, blocks };
}

/**
 * The number of pages a PDF declares, counted by its page objects; undefined when none are in
 * plain sight (compressed object streams hide them), and then the API is left to judge.
 */
function countPdfPages(bytes: Buffer): number | undefined {
  const matches = bytes.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g);
  return matches ? matches.length : undefined;
}
