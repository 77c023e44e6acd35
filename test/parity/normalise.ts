/**
 * What the model was told, made comparable: a tool_result's is_error and text with what may
 * legitimately differ between two runs replaced by placeholders (the workspace's absolute path,
 * durations, ids), and a short diff of two such texts.
 */

export interface ToolResultView {
  is_error: boolean;
  content: string;
}

type Block = { type?: string; text?: string };

/** The text of a tool_result's content: a string, or its text blocks joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return (content as Block[]).map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join('\n');
  return content === undefined ? '' : JSON.stringify(content);
}

/**
 * Where a long output was saved, in either's layout: Claude Code's file under
 * `~/.claude/projects/<project>/<session>/tool-results/`, outside the working directory and so
 * named by its absolute path; durable-agent's under the workspace's `.durable-agent/tool-results/`,
 * named by its content hash (a retried call writes the same file) and by its path in the
 * workspace, as durable-agent names every workspace file.
 */
const SAVED_OUTPUT_FILE =
  /\S*\/\.claude\/projects\/\S+\/tool-results\/[\w.-]+\.txt|\.durable-agent\/tool-results\/[\w.-]+\.txt/g;

/**
 * `text` with run-specific values replaced: the workspace (as given and resolved), durations,
 * uuids, the file a long output was saved to, the path bash was started by (Claude Code starts the
 * user's $SHELL, else the first bash of /bin, /usr/bin…, so bash names itself "/bin/bash" or
 * "/usr/bin/bash" in its errors; durable-agent starts `bash`); and a Read line gutter's padding
 * dropped (`     1\thello` and `1\thello` are the same line to the model).
 */
export function normalise(text: string, workspaces: string[]): string {
  // Before the workspace: Claude Code's file lies beside it, under a name that begins with it.
  let out = text.replace(SAVED_OUTPUT_FILE, '<saved output file>');
  for (const ws of [...new Set(workspaces)].sort((a, b) => b.length - a.length)) out = out.split(ws).join('<ws>');
  return out
    .replace(/^ +(\d+\t)/gm, '$1')
    .replace(/^\/[\w./-]*\/bash: line (\d+): /gm, 'bash: line $1: ')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\b\d+(\.\d+)?\s?(ms|milliseconds|seconds|s)\b/g, '<duration>')
    .replace(/[ \t]+$/gm, '')
    .trimEnd();
}

/** A one- or two-line account of where `a` (Claude Code) and `b` (durable-agent) first differ. */
export function shortDiff(a: string, b: string, width = 150): string {
  if (a === b) return '';
  const al = a.split('\n');
  const bl = b.split('\n');
  let i = 0;
  while (i < al.length && i < bl.length && al[i] === bl[i]) i++;
  const clip = (line: string | undefined) =>
    line === undefined ? '(nothing)' : JSON.stringify(line.length > width ? `${line.slice(0, width)}…` : line);
  return `line ${i + 1}: cc ${clip(al[i])} | da ${clip(bl[i])} (${al.length} vs ${bl.length} lines)`;
}
