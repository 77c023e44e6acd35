/**
 * The README's and docs' fenced blocks, and the commands in them, for the doc checks: which block
 * is commands, which is output or data, and each command split into words as a shell would (quotes,
 * `\` continuations, pipes, `&&`, redirections and `NAME=value` prefixes), without running it.
 */
import fs from 'node:fs';
import path from 'node:path';

export const root = path.join(__dirname, '..', '..');

/** The pages the doc check reads: the README and every page under docs/. */
export function docPages(): string[] {
  const docs = fs
    .readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
}

export function readPage(page: string): string {
  return fs.readFileSync(path.join(root, page), 'utf8');
}

/** Blocks whose lines are commands (a `console` block: its `$ ` lines). */
export const COMMAND_LANGUAGES = new Set(['sh', 'console']);
/** Blocks that hold no command: data, settings, diagrams. */
export const DATA_LANGUAGES = new Set(['json', 'jsonl', 'text']);

export interface FencedBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  lines: string[];
  /** The `## ` section the block is in. */
  section: string;
}

export function fencedBlocks(page: string, text = readPage(page)): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let open: FencedBlock | undefined;
  let fence = '';
  let section = '';
  text.split('\n').forEach((raw, index) => {
    const trimmed = raw.trim();
    if (open) {
      if (trimmed === fence) {
        blocks.push(open);
        open = undefined;
      } else {
        // A block inside a list item is indented; its lines are read without that indent.
        open.lines.push(raw.replace(/^ {0,4}/, ''));
      }
      return;
    }
    const start = /^(`{3,})(\S*)\s*$/.exec(trimmed);
    if (start) {
      fence = start[1] as string;
      open = { page, line: index + 1, language: start[2] ?? '', lines: [], section };
      return;
    }
    const heading = /^## (.*)$/.exec(raw);
    if (heading) section = (heading[1] as string).trim();
  });
  if (open) throw new Error(`${page}:${(open as FencedBlock).line}: a fenced block is never closed`);
  return blocks;
}

export interface DocCommand {
  where: string;
  /** The command line as written (continuations joined). */
  text: string;
  /** `NAME=value` prefixes. */
  env: Record<string, string>;
  words: string[];
}

/** The command lines of a block: a console block's `$ ` lines, else every line but comments. */
export function commandLines(block: FencedBlock): string[] {
  if (!COMMAND_LANGUAGES.has(block.language)) return [];
  const joined: string[] = [];
  let pending = '';
  for (const line of block.lines) {
    const text = pending ? `${pending} ${line.trim()}` : line;
    if (/\\\s*$/.test(text)) {
      pending = text.replace(/\\\s*$/, '').trimEnd();
      continue;
    }
    pending = '';
    joined.push(text);
  }
  const isConsole = block.language === 'console';
  return joined
    .filter((line) => !isConsole || line.startsWith('$ '))
    .map((line) => (isConsole ? line.slice(2) : line).trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Every simple command of a block (a pipeline or `a && b` gives several). */
export function blockCommands(block: FencedBlock): DocCommand[] {
  return commandLines(block).flatMap((line) =>
    splitCommandLine(line).map((words) => {
      const env: Record<string, string> = {};
      while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string)) {
        const word = words.shift() as string;
        env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
      }
      return { where: `${block.page}:${block.line}`, text: line, env, words };
    }),
  );
}

/**
 * A command line as a shell splits it: words with quotes removed, one list per simple command
 * (split at `|`, `||`, `&&`, `;`), redirections (`> file`, `2>&1`, `< file`) and a trailing
 * `# comment` left out. `$(...)` stays inside its word. `<id>`-style placeholders are words.
 */
export function splitCommandLine(line: string): string[][] {
  const commands: string[][] = [[]];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  let depth = 0;
  let redirect = false;
  const current = () => commands[commands.length - 1] as string[];
  const endWord = () => {
    if (word === undefined) return;
    if (redirect) redirect = false;
    else current().push(word);
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word = `${word ?? ''}${line[++i]}`;
      else word = `${word ?? ''}${c}`;
      continue;
    }
    if (depth > 0) {
      word = `${word ?? ''}${c}`;
      if (c === '(') depth++;
      if (c === ')') depth--;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
      continue;
    }
    if (c === '$' && line[i + 1] === '(') {
      word = `${word ?? ''}$(`;
      depth = 1;
      i++;
      continue;
    }
    if (c === '\\' && i + 1 < line.length) {
      word = `${word ?? ''}${line[++i]}`;
      continue;
    }
    if (/\s/.test(c)) {
      endWord();
      continue;
    }
    if (c === '#' && word === undefined) break;
    if (c === '|' || c === ';' || (c === '&' && line[i + 1] === '&')) {
      endWord();
      if ((c === '|' && line[i + 1] === '|') || c === '&') i++;
      commands.push([]);
      continue;
    }
    if (c === '<' && word === undefined && /^<[A-Za-z0-9_.:-]+>/.test(line.slice(i))) {
      // A placeholder such as <id>, not a redirection.
      const end = line.indexOf('>', i);
      word = line.slice(i, end + 1);
      i = end;
      continue;
    }
    if (c === '>' || c === '<') {
      // `2>` and `&>`: the digit or & before belongs to the redirection, not to a word.
      if (word !== undefined && /^[0-9&]$/.test(word)) word = undefined;
      endWord();
      if (line[i + 1] === '>' || line[i + 1] === '&') i++;
      if (line[i] === '&') {
        // `>&2`: the descriptor is the target.
        while (/[0-9]/.test(line[i + 1] ?? '')) i++;
        continue;
      }
      redirect = true;
      continue;
    }
    word = `${word ?? ''}${c}`;
  }
  if (quote) throw new Error(`unclosed ${quote} in: ${line}`);
  endWord();
  return commands.filter((words) => words.length > 0);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a page defines, duplicates numbered as GitHub numbers them. */
export function pageAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const slug = headingSlug(heading[1] as string);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Markdown links `[text](target)` and `<https://...>` autolinks outside fenced blocks. */
export function pageLinks(text: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  let inFence = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) inFence = !inFence;
    if (inFence) return;
    // Inline code is not a link.
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) links.push({ line: index + 1, target: match[1] as string });
  });
  return links;
}
