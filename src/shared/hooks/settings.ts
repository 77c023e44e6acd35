/**
 * A settings file's `hooks` block, validated (Claude Code's hooks reference, "Configuration").
 * A hook the user wrote must never be dropped without a word: a block that is malformed makes
 * the job fail before anything runs, saying which file, which JSON path and how to fix it, as
 * broken permission settings do; handlers durable-agent cannot run (prompt, agent, http, async,
 * PowerShell) load but are reported as not run.
 */
import { z } from 'zod';
import { parseRule } from '../permissions';
import { MATCHERLESS_HOOK_EVENTS, matcherKind, TOOL_HOOK_EVENTS } from './match';
import { HOOK_EVENTS, RUN_HOOK_EVENTS, type HookCommand, type HookMatcherGroup, type HooksConfig } from './types';
import { builtSchema, lazySchema } from '../lazy-schema';

/** One hook handler. Unknown keys pass, so a newer Claude Code settings file still loads. */
export const hookHandlerSchema = lazySchema(() =>
  z.looseObject({
    type: z.string().describe('"command" runs here; "http", "prompt", "agent" and "mcp_tool" load but do not run'),
    command: z.string().describe('For type "command": the shell command, run with bash -c in the workspace').optional(),
    timeout: z.number().positive().describe('Seconds before the hook and everything it started are killed').optional(),
    if: z
      .string()
      .describe('Permission rule syntax, e.g. "Bash(git *)": run only for tool calls it matches')
      .optional(),
    async: z.boolean().describe('Claude Code runs it in the background; durable-agent does not run it').optional(),
    asyncRewake: z.boolean().describe('Like async; not run here').optional(),
    shell: z.string().describe('"bash" (the default) runs here; "powershell" does not').optional(),
    statusMessage: z.string().describe('Spinner text in Claude Code; unused here').optional(),
    once: z.boolean().describe('Honoured only in skill frontmatter, ignored in settings files').optional(),
  }),
);

/** One matcher group: a filter and the handlers it runs. */
export const hookMatcherGroupSchema = lazySchema(() =>
  z.looseObject({
    matcher: z
      .string()
      .describe('Tool name, "A|B" alternatives, or a JavaScript regex; "", "*" or absent: all')
      .optional(),
    hooks: z.array(builtSchema(hookHandlerSchema)).describe('The handlers to run when the matcher matches'),
  }),
);

/** The `hooks` block: event name to matcher groups. */
export const hooksSettingsSchema = lazySchema(() => z.record(z.string(), z.array(builtSchema(hookMatcherGroupSchema))));

const EXAMPLE_GROUP = '{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}';

/**
 * Validate one settings file's `hooks` value. Returns the configuration, every command tagged
 * with `file` as its source, and the problems that do not stop the file from loading (handlers
 * or events not run, a matcher that is ignored). Throws an Error naming `file`, the JSON path of
 * each problem and its fix when the block is malformed.
 */
export function parseHooksSettings(raw: unknown, file: string): { hooks: HooksConfig; problems: string[] } {
  const parsed = hooksSettingsSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      formatHookErrors(
        file,
        parsed.error.issues.map((i) => describeIssue(i, raw)),
      ),
    );

  const errors: string[] = [];
  const problems: string[] = [];
  const hooks: HooksConfig = {};
  for (const [event, groups] of Object.entries(parsed.data)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      const near = nearestEvent(event);
      if (near !== undefined) {
        errors.push(`hooks.${event} is not a Claude Code hook event; did you mean "${near}"? Rename the key.`);
        continue;
      }
      problems.push(
        `hooks.${event} is not a Claude Code hook event (durable-agent knows ${HOOK_EVENTS.length}); not run`,
      );
    }
    hooks[event] = groups.map((group, groupIndex) => {
      const at = `hooks.${event}[${groupIndex}]`;
      const checked = checkGroup(event, group, at, file, errors);
      if (
        group.matcher !== undefined &&
        MATCHERLESS_HOOK_EVENTS.includes(event) &&
        (RUN_HOOK_EVENTS as readonly string[]).includes(event) &&
        matcherKind(group.matcher) !== 'all'
      ) {
        (checked.notes ??= []).push(
          `${at}.matcher ${JSON.stringify(group.matcher)}: ${event} has no matcher support, so the matcher is ignored (as in Claude Code) and the hooks run every time`,
        );
      }
      problems.push(...(checked.notes ?? []));
      return checked;
    });
  }
  if (errors.length > 0) throw new Error(formatHookErrors(file, errors));
  return { hooks, problems };
}

function checkGroup(
  event: string,
  group: z.infer<typeof hookMatcherGroupSchema>,
  at: string,
  file: string,
  errors: string[],
): HookMatcherGroup {
  if (matcherKind(group.matcher) === 'regex') {
    try {
      new RegExp(group.matcher as string);
    } catch (error) {
      errors.push(
        `${at}.matcher ${JSON.stringify(group.matcher)} is not a valid regular expression (${(error as Error).message}). A matcher of letters, digits, _ and | names tools exactly; anything else is a JavaScript regex, e.g. "mcp__memory__.*"`,
      );
    }
  }
  const commands: HookCommand[] = [];
  const notes: string[] = [];
  group.hooks.forEach((handler, index) => {
    const where = `${at}.hooks[${index}]`;
    if (handler.type !== 'command') {
      notes.push(`${describeHandler(handler)} (${where}): durable-agent runs only "command" hooks`);
      return;
    }
    const command = handler.command;
    if (command === undefined || command.trim() === '') {
      errors.push(
        `${where}.command is ${command === undefined ? 'missing' : 'empty'}: a command hook needs the shell command to run, e.g. "\\"$CLAUDE_PROJECT_DIR\\"/.claude/hooks/check.sh"`,
      );
      return;
    }
    if (handler.if !== undefined) {
      const rule = parseRule(handler.if);
      if (!rule.ok) {
        errors.push(`${where}.if ${JSON.stringify(handler.if)}: ${rule.error}`);
        return;
      }
      if (!TOOL_HOOK_EVENTS.includes(event)) {
        notes.push(`${describeHandler(handler)} (${where}): has "if", which Claude Code never runs on ${event}`);
        return;
      }
    }
    if (handler.async === true || handler.asyncRewake === true) {
      notes.push(
        `${describeHandler(handler)} (${where}): async hooks run in the background in Claude Code and cannot decide anything; durable-agent does not run them`,
      );
      return;
    }
    if (handler.shell !== undefined && handler.shell !== 'bash') {
      notes.push(
        `${describeHandler(handler)} (${where}): shell ${JSON.stringify(handler.shell)}; durable-agent runs hooks with bash only`,
      );
      return;
    }
    commands.push({
      command,
      ...(handler.timeout !== undefined ? { timeoutSec: handler.timeout } : {}),
      source: file,
      ...(handler.if !== undefined ? { if: handler.if } : {}),
    });
  });
  return {
    ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
    hooks: commands,
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/** `command hook "./x.sh"`, `prompt hook "Check that..."`, `http hook "https://..."`. */
function describeHandler(handler: z.infer<typeof hookHandlerSchema>): string {
  const record = handler as Record<string, unknown>;
  const text = [handler.command, record.prompt, record.url, record.tool].find((v) => typeof v === 'string') as
    string | undefined;
  const shown = text === undefined ? '' : ` ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`;
  return `${handler.type} hook${shown}`;
}

/** A known event this unknown name is a slip of: the same letters in another case, or two edits away. */
function nearestEvent(name: string): string | undefined {
  const lower = name.trim().toLowerCase();
  let best: { event: string; distance: number } | undefined;
  for (const event of HOOK_EVENTS) {
    const distance = editDistance(lower, event.toLowerCase());
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { event, distance };
  }
  return best?.event;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, (previous[j] as number) + 1, (current[j - 1] as number) + 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

function formatHookErrors(file: string, errors: string[]): string {
  if (errors.length === 1) return `${file}: ${errors[0]}`;
  return `${file} has ${errors.length} problems in hooks:\n${errors.map((error) => `  - ${error}`).join('\n')}`;
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const segments = ['hooks', ...issue.path];
  const where = segments
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : index === 0 ? String(segment) : `.${String(segment)}`,
    )
    .join('');
  let actual: unknown = raw;
  for (const segment of issue.path) {
    actual =
      typeof actual === 'object' && actual !== null ? (actual as Record<PropertyKey, unknown>)[segment] : undefined;
  }
  const found = describeValue(actual);
  const key = issue.path[issue.path.length - 1];
  const depth = issue.path.length;
  if (issue.code === 'invalid_type') {
    if (depth === 0)
      return `${where} must be an object from event name to matcher groups, such as {"PreToolUse": [${EXAMPLE_GROUP}]}, not ${found}`;
    if (depth === 1) return `${where} must be an array of matcher groups, such as [${EXAMPLE_GROUP}], not ${found}`;
    if (depth === 2) return `${where} must be a matcher group, such as ${EXAMPLE_GROUP}, not ${found}`;
    if (key === 'hooks' && actual === undefined) {
      return `${where} is missing: each matcher group lists its handlers in "hooks", as in ${EXAMPLE_GROUP}`;
    }
    if (key === 'hooks')
      return `${where} must be an array of handlers such as [{"type": "command", "command": "./check.sh"}], not ${found}`;
    if (typeof key === 'number')
      return `${where} must be a handler such as {"type": "command", "command": "./check.sh"}, not ${found}`;
    if (key === 'type' && actual === undefined)
      return `${where} is missing: write "type": "command" for a shell command hook`;
    if (key === 'timeout') return `${where} must be a number of seconds such as 30, not ${found}`;
    if (key === 'matcher') return `${where} must be a string such as "Bash" or "Edit|Write", not ${found}`;
    return `${where} must be ${issue.expected}, not ${found}`;
  }
  if (key === 'timeout') return `${where} must be a positive number of seconds such as 30, not ${found}`;
  return `${where}: ${issue.message}`;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `the ${typeof value} ${String(value)}`;
}
