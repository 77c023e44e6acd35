import { readFile, stat, writeFile } from 'node:fs/promises';
import type { ToolOutcome } from '../../shared/tool-definition';
import type { EditInput } from '../../shared/tools/edit';
import { BINARY_SNIFF_BYTES, describeFsError, looksBinary, toolError, toolResult } from './fs-errors';
import type { ToolContext } from './tool-context';
import { resolveWorkspacePath } from './workspace-path';

/** Files above this size are refused: Edit reads the whole file into memory. */
const MAX_EDIT_BYTES = 64 * 1024 * 1024;
/** How much of a failing old_string is echoed back to the model. */
const ECHO_CHARS = 500;

/** Replace old_string by new_string in one file: exactly once, or everywhere with replace_all. */
export async function runEdit(input: EditInput, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await resolveWorkspacePath(ctx.workspace, input.file_path);
  if (!target.ok) return toolError(target.error);
  const shown = target.relative;

  if (input.old_string === input.new_string) {
    return toolError('No changes to make: old_string and new_string are exactly the same.');
  }

  let original: string;
  try {
    const info = await stat(target.absolute);
    if (info.isDirectory()) return toolError(`${shown} is a directory, not a file.`);
    if (!info.isFile()) return toolError(`${shown} is not a regular file.`);
    if (info.size > MAX_EDIT_BYTES) {
      return toolError(`${shown} is too large to edit (${info.size} bytes; the limit is ${MAX_EDIT_BYTES}).`);
    }
    const bytes = await readFile(target.absolute);
    if (looksBinary(bytes.subarray(0, BINARY_SNIFF_BYTES))) {
      return toolError(`Cannot edit ${shown}: it is a binary file (it contains NUL bytes).`);
    }
    original = bytes.toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return toolError(`File does not exist: ${shown}. Use Write to create a new file.`);
    }
    return toolError(describeFsError(error, shown));
  }

  // The model writes '\n'; a file that consistently uses CRLF is edited in LF form and converted
  // back, so its line endings survive. Mixed files are matched byte for byte.
  const crlf = original.includes('\r\n') && !/(^|[^\r])\n/.test(original);
  const toLf = (text: string) => (crlf ? text.replace(/\r\n/g, '\n') : text);
  const content = toLf(original);
  const oldString = toLf(input.old_string);
  const newString = toLf(input.new_string);

  let updated: string;
  let replacements: number;
  if (oldString === '') {
    if (content !== '') {
      return toolError(
        'old_string is empty, but the file is not. Give the exact text to replace, or use Write to replace the whole file.',
      );
    }
    updated = newString;
    replacements = 1;
  } else {
    replacements = countOccurrences(content, oldString);
    if (replacements === 0) {
      return toolError(
        `String to replace not found in ${shown}. old_string must match the file exactly, including whitespace and indentation; Read the file again and copy the text.\nString: ${echo(input.old_string)}`,
      );
    }
    if (replacements > 1 && !input.replace_all) {
      return toolError(
        `Found ${replacements} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, provide more surrounding context to uniquely identify the instance.\nString: ${echo(input.old_string)}`,
      );
    }
    updated = input.replace_all
      ? content.split(oldString).join(newString)
      : replaceFirst(content, oldString, newString);
  }

  try {
    await writeFile(target.absolute, crlf ? updated.replace(/\n/g, '\r\n') : updated, 'utf8');
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }
  return toolResult(
    `The file ${shown} has been updated. Made ${replacements} replacement${replacements === 1 ? '' : 's'}.`,
  );
}

/** Non-overlapping occurrences, the way split/join will replace them. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** String.prototype.replace would interpret `$&` and friends in new_string; slicing does not. */
function replaceFirst(haystack: string, needle: string, replacement: string): string {
  const at = haystack.indexOf(needle);
  return haystack.slice(0, at) + replacement + haystack.slice(at + needle.length);
}

function echo(text: string): string {
  return text.length <= ECHO_CHARS
    ? text
    : `${text.slice(0, ECHO_CHARS)}... [${text.length - ECHO_CHARS} more characters]`;
}
