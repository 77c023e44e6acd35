import { PDFDocument } from 'pdf-lib';
import type { ToolResultContentBlock } from '../../shared/messages';
import type { ToolOutcome } from '../../shared/tool-definition';
import { parsePageRange, READ_MAX_PDF_PAGES, READ_MAX_PDF_PAGES_WHOLE } from '../../shared/tools/read-pages';
import { formatFileSize } from './file-size';
import { toolError } from './fs-errors';

/** A PDF sent whole, or the PDF of the chosen pages, is at most this large: a request holds 32 MB of base64. */
export const READ_MAX_PDF_BYTES = 20 * 1024 * 1024;
/** A PDF that pages are taken out of may be this large: only the chosen pages are sent. */
export const READ_MAX_PDF_BYTES_WITH_PAGES = 100 * 1024 * 1024;

/**
 * A PDF for the model: the whole file as a document block, or with `pages` a new PDF holding only
 * those pages. A PDF of more than READ_MAX_PDF_PAGES_WHOLE pages needs `pages`.
 */
export async function readPdf(bytes: Buffer, shown: string, pages: string | undefined): Promise<ToolOutcome> {
  if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') {
    return toolError(
      `${shown} has a .pdf extension but is not a PDF (it does not start with %PDF-). Look at it with Bash (e.g. \`file ${shown}\` or \`head -c 500 ${shown}\`).`,
    );
  }
  const loaded = await loadPdf(bytes);
  if (pages === undefined) {
    const pageCount = loaded ? loaded.pageCount : countPageObjects(bytes);
    if (pageCount !== undefined && pageCount > READ_MAX_PDF_PAGES_WHOLE) {
      return toolError(
        `This PDF has ${pageCount} pages, which is too many to read at once. Use the pages parameter to read specific page ranges (e.g., pages: "1-5"). Maximum ${READ_MAX_PDF_PAGES} pages per request.`,
      );
    }
    // A PDF this parser cannot open is still sent: the API reads more kinds of PDF than it does.
    return pdfOutcome(`PDF file read: ${shown} (${formatFileSize(bytes.length)})`, bytes);
  }
  const range = parsePageRange(pages);
  // The input schema has already refused any other text.
  if (!range) return toolError(`Invalid pages parameter: "${pages}".`);
  if (!loaded) return toolError('PDF file is corrupted or invalid.');
  const { document, pageCount } = loaded;
  if (document.isEncrypted) {
    return toolError(
      `${shown} is encrypted, and pages cannot be taken out of an encrypted PDF here. Make a decrypted copy with a shell command (e.g. qpdf --decrypt), then read that.`,
    );
  }
  if (pageCount === 0) return toolError('PDF reports 0 pages (empty page tree). The PDF may be invalid.');
  if (range.first > pageCount) {
    const asked = range.first === range.last ? `page ${range.first}` : `pages ${range.first}-${range.last}`;
    return toolError(
      `Requested ${asked} is outside the document (PDF has ${pageCount} ${pageCount === 1 ? 'page' : 'pages'}). Use a range within 1-${pageCount}, maximum ${READ_MAX_PDF_PAGES} pages per request (e.g. pages: "1-${Math.min(pageCount, READ_MAX_PDF_PAGES)}").`,
    );
  }
  // Like a page renderer given a last page past the end, stop at the document's last page.
  const last = Math.min(range.last, pageCount);
  let chosen: Buffer;
  try {
    chosen = await extractPages(document, range.first, last);
  } catch {
    return toolError('PDF file is corrupted or invalid.');
  }
  if (chosen.length > READ_MAX_PDF_BYTES) {
    return toolError(
      `The requested pages of ${shown} make a PDF of ${formatFileSize(chosen.length)}, more than the ${formatFileSize(READ_MAX_PDF_BYTES)} that can be sent. Read fewer pages at a time.`,
    );
  }
  const count = last - range.first + 1;
  const which = count === 1 ? `page ${range.first}` : `pages ${range.first}-${last}`;
  return pdfOutcome(
    `PDF pages extracted: ${count} page(s) from ${shown} (${formatFileSize(bytes.length)}): ${which} of ${pageCount}, attached as a PDF of those pages only.`,
    chosen,
  );
}

function pdfOutcome(text: string, pdf: Buffer): ToolOutcome {
  const blocks: ToolResultContentBlock[] = [
    { type: 'text', text },
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } },
  ];
  return { content: text, isError: false, blocks };
}

/** The parsed PDF and its page count, or undefined when it is damaged past what the parser repairs. */
async function loadPdf(bytes: Buffer): Promise<{ document: PDFDocument; pageCount: number } | undefined> {
  try {
    // Encrypted PDFs still load (their page tree is readable), so a whole read can go on.
    const document = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false });
    // A PDF without a catalog or page tree loads, and fails only here.
    return { document, pageCount: document.getPageCount() };
  } catch {
    return undefined;
  }
}

/** A new PDF of pages first..last (1-based, inclusive) of the document. */
async function extractPages(document: PDFDocument, first: number, last: number): Promise<Buffer> {
  const target = await PDFDocument.create({ updateMetadata: false });
  const indices = Array.from({ length: last - first + 1 }, (_, i) => first - 1 + i);
  for (const page of await target.copyPages(document, indices)) target.addPage(page);
  return Buffer.from(await target.save());
}

/**
 * The number of pages a PDF the parser could not open declares, counted by its page objects;
 * undefined when none are in plain sight (compressed object streams hide them).
 */
function countPageObjects(bytes: Buffer): number | undefined {
  const matches = bytes.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g);
  return matches ? matches.length : undefined;
}
