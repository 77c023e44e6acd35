import type { ImageMediaType, TextBlock, ToolResultContentBlock } from '../../shared/messages';
import { BASH_MAX_OUTPUT_CHARS } from '../../shared/tools/bash';
import type { ToolOutcome } from '../../shared/tool-definition';
import { toolError } from './fs-errors';
import { safeSlice } from './numbered-lines';

/** A cell's outputs longer than this together are replaced by a way to read them with Bash. */
const LARGE_OUTPUTS_CHARS = 10_000;

interface NotebookOutput {
  output_type?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

interface NotebookCell {
  id?: string;
  cell_type?: string;
  source?: string | string[];
  outputs?: NotebookOutput[];
}

interface RenderedOutput {
  text: string;
  image?: { data: string; mediaType: ImageMediaType };
}

const joined = (value: unknown): string =>
  Array.isArray(value) ? value.map(String).join('') : typeof value === 'string' ? value : '';

/**
 * A Jupyter notebook as Claude Code shows it: each cell as `<cell id="...">source</cell id="...">`
 * (with `<cell_type>` for non-code cells and `<language>` for code that is not Python), each
 * output after it as text (a blank line, then the text) or an image block; adjacent text joined
 * by line breaks.
 */
export function renderNotebook(json: string, shown: string): ToolOutcome {
  let notebook: { cells?: unknown; metadata?: { language_info?: { name?: unknown } } };
  try {
    notebook = JSON.parse(json) as typeof notebook;
  } catch (error) {
    return toolError(`${shown} is not a valid notebook: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(notebook?.cells)) return toolError(`${shown} is not a valid notebook: it has no cells list.`);
  const languageName = notebook.metadata?.language_info?.name;
  const language = typeof languageName === 'string' ? languageName : 'python';

  const blocks: ToolResultContentBlock[] = [];
  const push = (block: ToolResultContentBlock) => {
    const last = blocks.at(-1);
    if (last?.type === 'text' && block.type === 'text') (last as TextBlock).text += `\n${block.text}`;
    else blocks.push(block);
  };
  (notebook.cells as NotebookCell[]).forEach((cell, index) => {
    const id = typeof cell.id === 'string' ? cell.id : `cell-${index}`;
    const type = typeof cell.cell_type === 'string' ? cell.cell_type : 'code';
    const tags =
      (type !== 'code' ? `<cell_type>${type}</cell_type>` : '') +
      (type === 'code' && language !== 'python' ? `<language>${language}</language>` : '');
    push({ type: 'text', text: `<cell id="${id}">${tags}${joined(cell.source)}</cell id="${id}">` });
    const outputs = Array.isArray(cell.outputs) ? cell.outputs.map(renderOutput) : [];
    const outputChars = outputs.reduce((sum, output) => sum + output.text.length + (output.image?.data.length ?? 0), 0);
    if (outputChars > LARGE_OUTPUTS_CHARS) {
      push({
        type: 'text',
        text: `\nOutputs are too large to include. Use Bash with: cat <notebook_path> | jq '.cells[${index}].outputs'`,
      });
      return;
    }
    for (const output of outputs) {
      if (output.text) push({ type: 'text', text: `\n${output.text}` });
      if (output.image) {
        push({
          type: 'image',
          source: { type: 'base64', media_type: output.image.mediaType, data: output.image.data },
        });
      }
    }
  });
  const text = blocks
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  if (blocks.length === 0) return { content: `${shown} has no cells.`, isError: false };
  return blocks.every((block) => block.type === 'text')
    ? { content: text, isError: false }
    : { content: text, isError: false, blocks };
}

function renderOutput(output: NotebookOutput): RenderedOutput {
  switch (output.output_type) {
    case 'stream':
      return { text: cut(joined(output.text)) };
    case 'execute_result':
    case 'display_data': {
      const data = output.data ?? {};
      const png = joined(data['image/png']);
      const jpeg = joined(data['image/jpeg']);
      const image = png
        ? { data: png.replace(/\s/g, ''), mediaType: 'image/png' as const }
        : jpeg
          ? { data: jpeg.replace(/\s/g, ''), mediaType: 'image/jpeg' as const }
          : undefined;
      return { text: cut(joined(data['text/plain'])), ...(image ? { image } : {}) };
    }
    case 'error':
      return {
        text: cut(`${output.ename ?? ''}: ${output.evalue ?? ''}\n${(output.traceback ?? []).join('\n')}`),
      };
    default:
      return { text: '' };
  }
}

/** An output longer than Bash's inline limit is cut like Bash output. */
function cut(text: string): string {
  if (text.length <= BASH_MAX_OUTPUT_CHARS) return text;
  return `${safeSlice(text, BASH_MAX_OUTPUT_CHARS)}\n... [${text.length - BASH_MAX_OUTPUT_CHARS} characters truncated]`;
}
