import type { z } from 'zod';
import { toolUseError } from './tool-use-error';

/**
 * A tool input that failed its schema, told to the model as Claude Code 2.1.332 tells it, so a
 * model trained on Claude Code's transcripts reads it at a glance:
 *
 *     <tool_use_error>InputValidationError: Read failed due to the following issue:
 *     The required parameter `file_path` is missing</tool_use_error>
 *
 * One line per issue: missing parameters, unexpected ones, wrong types, then every other issue
 * (`is invalid: …`). When every issue is of the last kind (a value out of range, an enum), Claude
 * Code passes on zod's own message, the issues as JSON, and so does this.
 */
export function formatInputValidationError(toolName: string, error: z.ZodError): string {
  return toolUseError(`InputValidationError: ${describeIssues(toolName, error.message, error.issues)}`);
}

type Issue = z.core.$ZodIssue;

/** Issues listed at most, of each of the two kinds. */
const MAX_LISTED = 20;
/** Longest issue message shown. */
const MAX_MESSAGE_CHARS = 500;
/** Longest zod message passed on whole. */
const MAX_WHOLE_MESSAGE_CHARS = 4000;
/** A parameter name longer than this is shortened to its first and last characters. */
const MAX_NAME_CHARS = 64;
const NAME_HEAD_CHARS = 40;
const NAME_TAIL_CHARS = 24;

function describeIssues(toolName: string, wholeMessage: string, issues: readonly Issue[]): string {
  const allOther = issues.every(isOtherIssue);
  if (allOther && wholeMessage.length <= MAX_WHOLE_MESSAGE_CHARS && namesPrintable(issues)) return wholeMessage;
  const flat = allOther ? issues.flatMap(closestUnionBranch) : issues;

  const isMissing = (issue: Issue) =>
    issue.code === 'invalid_type' && (issue.message ?? '').includes('received undefined');
  const missing = flat.filter(isMissing).map((issue) => issue.path);
  const unexpected = flat.flatMap((issue) =>
    issue.code === 'unrecognized_keys' ? issue.keys.map((key) => [...issue.path, key]) : [],
  );
  const wrongType = flat.filter((issue) => issue.code === 'invalid_type' && !isMissing(issue));
  const other = flat.filter(isOtherIssue);

  const counted = missing.length + unexpected.length + wrongType.length;
  // "(1 more parameter not listed)" would take the line the parameter needs.
  const room = counted === MAX_LISTED + 1 ? counted : MAX_LISTED;
  const shownMissing = missing.slice(0, room);
  const shownWrongType = wrongType.slice(0, room - shownMissing.length);
  const shownUnexpected = unexpected.slice(0, room - shownMissing.length - shownWrongType.length);
  const lines = [
    ...shownMissing.map((at) => `The required parameter \`${paramName(at)}\` is missing`),
    ...shownUnexpected.map((at) => `An unexpected parameter \`${paramName(at)}\` was provided`),
    ...shownWrongType.map((issue) => {
      const received = /received (\w+)/.exec(issue.message ?? '')?.[1] ?? 'unknown';
      const expected = 'expected' in issue ? String(issue.expected) : 'unknown';
      return `The parameter \`${paramName(issue.path)}\` type is expected as \`${expected}\` but provided as \`${received}\``;
    }),
  ];
  const unlisted = counted - lines.length;
  if (unlisted > 0) lines.push(`(${unlisted} more ${plural(unlisted, 'parameter')} not listed)`);
  for (const issue of other.slice(0, MAX_LISTED)) {
    const name = paramName(issue.path);
    const subject = name === '' ? 'The input' : `The parameter \`${name}\``;
    const detail = clip((issue.message ?? '').replace(/^Invalid input(?:: |$)/, ''), MAX_MESSAGE_CHARS);
    if (detail !== '') lines.push(`${subject} is invalid: ${detail}`);
    else
      lines.push(
        issue.code === 'invalid_union' ? `${subject} matches none of the accepted forms` : `${subject} is invalid`,
      );
  }
  const unlistedOther = other.length - MAX_LISTED;
  if (unlistedOther > 0) lines.push(`(${unlistedOther} more ${plural(unlistedOther, 'issue')} not listed)`);
  return `${toolName} failed due to the following ${lines.length > 1 ? 'issues' : 'issue'}:\n${lines.join('\n')}`;
}

/** Neither a missing or mistyped parameter nor an unexpected one: a value out of range, an enum, a refinement. */
function isOtherIssue(issue: Issue): boolean {
  return issue.code !== 'invalid_type' && issue.code !== 'unrecognized_keys';
}

/** How bad a union branch's top-level issues are: a wrong type (2) is worse than a wrong value (1). */
function badness(issues: readonly Issue[]): number {
  return Math.max(
    0,
    ...issues
      .filter((issue) => issue.path.length === 0)
      .map((issue) => {
        switch (issue.code) {
          case 'invalid_type':
            return 2;
          case 'invalid_value':
            return 1;
          case 'invalid_union':
            return issue.errors.length > 0 ? Math.min(...issue.errors.map(badness)) : 0;
          default:
            return 0;
        }
      }),
  );
}

/** A union's issues replaced by those of the branch the input came closest to, paths joined. */
function closestUnionBranch(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
  const closest = issue.errors.reduce((best, branch) => {
    const by = badness(branch) - badness(best);
    return by < 0 || (by === 0 && branch.length < best.length) ? branch : best;
  });
  return closest.flatMap((inner) => closestUnionBranch({ ...inner, path: [...issue.path, ...inner.path] } as Issue));
}

/** True when no parameter name in the issues would be shown other than as it is. */
function namesPrintable(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(namesPrintable);
  if (typeof value !== 'object' || value === null) return true;
  return Object.entries(value).every(([key, inner]) =>
    (key === 'path' || key === 'keys') && Array.isArray(inner)
      ? inner.every((part) => typeof part !== 'string' || printableName(part) === part)
      : namesPrintable(inner),
  );
}

/** A parameter's path as `a.b[0].c`, made printable. */
function paramName(at: readonly PropertyKey[]): string {
  if (at.length === 0) return '';
  const joined = at.reduce<string>((text, part, i) => {
    if (typeof part === 'number') return `${text}[${part}]`;
    return i === 0 ? String(part) : `${text}.${String(part)}`;
  }, '');
  return printableName(joined);
}

/** Invisible and control characters, which a name must not hide. */
const INVISIBLE =
  // eslint-disable-next-line no-misleading-character-class -- combining marks listed on purpose, each tested alone
  /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2065\u3164\uFE00-\uFE0F\uFFA0\uFFF0-\uFFF8\u{E0000}-\u{E0FFF}]/u;

/**
 * One character of a name as shown between backticks: invisible ones and surrounding whitespace
 * as `\u{…}`, a backtick or angle bracket (which could end the quote or the tag) as a look-alike.
 */
function shownChar(char: string, edge: boolean): string {
  if (edge || INVISIBLE.test(char)) return `\\u{${(char.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`;
  switch (char) {
    case '`':
      return "'";
    case '<':
      return '\u2039';
    case '>':
      return '\u203A';
    default:
      return char;
  }
}

/** A name made printable, and shortened to its head and tail when long. */
function printableName(name: string): string {
  const lead = name.length - name.trimStart().length;
  const trail = name.trimEnd().length;
  const isEdge = (at: number) => at < lead || at >= trail;
  let shown = '';
  let head = '';
  let headEnd = 0;
  let at = 0;
  for (const char of name) {
    shown += shownChar(char, isEdge(at));
    at += char.length;
    if (shown.length <= NAME_HEAD_CHARS) {
      head = shown;
      headEnd = at;
    }
    if (shown.length > MAX_NAME_CHARS) break;
  }
  if (shown.length <= MAX_NAME_CHARS) return shown;
  let tail = '';
  let tailStart = name.length;
  for (const char of Array.from(lastChars(name, NAME_TAIL_CHARS)).reverse()) {
    const start = tailStart - char.length;
    const next = shownChar(char, isEdge(start)) + tail;
    if (next.length > NAME_TAIL_CHARS) break;
    tail = next;
    tailStart = start;
  }
  const left = tailStart - headEnd;
  return `${head}\u2026 [+${left} ${plural(left, 'char')}] \u2026${tail}`;
}

/** The last `count` UTF-16 units of `text`, without a split surrogate pair. */
function lastChars(text: string, count: number): string {
  if (text.length <= count) return text;
  const tail = text.slice(-count);
  const first = tail.charCodeAt(0);
  return first >= 0xdc00 && first <= 0xdfff ? tail.slice(1) : tail;
}

/** `text` cut to `max` UTF-16 units (a surrogate pair kept whole), saying how much was left out. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let head = text.slice(0, max);
  const last = head.charCodeAt(max - 1);
  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1);
  return `${head}\u2026 [+${text.length - head.length} chars]`;
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}
