import type { FileHandle } from 'node:fs/promises';
import { imageFormat, imageProblem } from '../../shared/image-check';
import type { ToolOutcome } from '../../shared/tool-definition';
import { formatFileSize } from './file-size';
import { describeFsError, toolError } from './fs-errors';
import { renderNotebook } from './read-notebook';
import { READ_MAX_PDF_BYTES, READ_MAX_PDF_BYTES_WITH_PAGES, readPdf } from './read-pdf';

const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp']);
/** The API takes an image of at most 5 MB (of base64 text): this many bytes of file. */
export const READ_MAX_IMAGE_BYTES = Math.floor((5 * 1024 * 1024 * 3) / 4);
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
  const limit =
    kind === 'image'
      ? READ_MAX_IMAGE_BYTES
      : kind === 'pdf'
        ? pages === undefined
          ? READ_MAX_PDF_BYTES
          : READ_MAX_PDF_BYTES_WITH_PAGES
        : READ_MAX_NOTEBOOK_BYTES;
  if (size > limit) {
    return toolError(
      `${shown} is too large to read (${formatFileSize(size)}; at most ${formatFileSize(limit)} for ${kind === 'image' ? 'an image' : kind === 'pdf' ? 'a PDF' : 'a notebook'}). ` +
        (kind === 'notebook'
          ? `Read its cells in parts with Bash, e.g. jq '.cells[0:20]' ${shown}.`
          : kind === 'pdf' && pages === undefined
            ? 'Read some of its pages with the pages parameter (e.g., pages: "1-5"), or make a smaller copy with a shell command (e.g. qpdf), then read that.'
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
