/**
 * decidePermission: Claude Code's permission rules and modes as one pure function.
 *
 * Order (Claude Code's documented order: "deny, then ask, then allow; the first match wins, and
 * rule specificity does not change the order"):
 *   1. deny rules: a match denies, in every mode (bypassPermissions included).
 *   2. plan mode: anything that is not read-only is denied. Plan mode is documented as "Claude
 *      can analyze but not modify files or execute commands"; a user who chose it expects that
 *      even when an allow rule (written for normal work) would cover the call. So plan is a
 *      ceiling, not only a default.
 *   3. ask rules: a match asks, even in bypassPermissions (the docs: an ask rule prompts "even if
 *      something else would allow it"; in Claude Code the ask-rule check runs before the mode's
 *      bypass).
 *   4. bypassPermissions: allow.
 *   5. allow rules.
 *   6. the mode's default for the tool.
 * Finally dontAsk turns every "ask" into "deny" (the docs: dontAsk "auto-denies tools unless
 * pre-approved"), which makes it the right mode for CI.
 *
 * Bash rules are matched against what will really run (`bash.ts`, `shell/invocations.ts`). When a
 * part of the command is only known once it runs (the program is `$X`, `$(echo rm)`, a backtick
 * substitution, a glob such as `/bin/r?` or a brace expansion; a shell reads commands from a
 * pipe; the reader cannot parse the line) and a Bash deny or ask rule could match what it turns
 * out to be, that rule cannot be ruled out: the call asks, in every mode, bypassPermissions
 * included (denied under plan and dontAsk). Deny rules are documented to hold in every mode, and a
 * rule that can be talked around by spelling the program differently would not hold.
 * With no such rule, an unknowable program is just a command that is not read-only: the mode
 * decides (default and acceptEdits ask, plan and dontAsk deny, bypassPermissions runs it, since
 * the user asked for everything to run and there is no rule to protect), and no allow rule other
 * than the bare `Bash` ever approves it.
 *
 * git's own configuration counts as code only known when it runs (`shell/programs/git.ts`): a
 * subcommand that is not one of git's (an alias from the repository's config may stand behind it),
 * `-c` settings that name a program, `--config-env`, `--exec-path=`, git by its path, and the
 * `GIT_*` variables through which git runs programs.
 *
 * Code hidden in text. Bash runs a command substitution a second time from text it has already
 * expanded: `declare 'a[$(rm x)]=1'`, `printf -v 'a[$(rm x)]'`, `let`, `read`, `test -v`,
 * `[[ -v ]]`, `unset`, any arithmetic (`x='a[$(rm x)]'; echo $((x))`, `${s:x}`, `[[ $x -eq 0 ]]`,
 * so through any variable), prompts (`${x@P}`, `PS4`), `compgen -W`. Which builtin or context
 * will re-evaluate a value cannot be told from the text (values travel through variables,
 * here-strings, `read`, here-documents), so the rule is the simple one: ANY quoted or escaped
 * text that holds `$(` or a backtick (`'$(...)'`, `"\$("`, `$'\x24('`, a quoted here-document's
 * body, a `for` word list) counts as a possible command substitution. Only text the reader
 * itself reads as a command line is exempt (`bash -c '...'`, `eval`, `trap`, `alias`, `watch`, a
 * shell's here-document): its substitutions are read and matched. Counted the same: `${x@P}`,
 * `${x@E}` and `${!x}` expansions; setting or naming (`export`, `read`, `printf -v`, `env`, a
 * prefix, a `for` variable) a variable bash runs as code or reads code from (`PS0`-`PS4`,
 * `BASH_ENV`, `ENV`, `SHELLOPTS`, `BASHOPTS`); `bind -x`; `fc` (except `fc -l`). When a Bash deny or
 * ask rule exists, any of these makes the rule "cannot be ruled out" (ask in every mode, deny in
 * plan and dontAsk); such a command is never read-only; and no command allow rule approves it
 * when bash itself may evaluate the text (the program is a builtin, the part only assigns, or it
 * is a `${x@P}`-style expansion). `PROMPT_COMMAND=...`, imported functions
 * (`env 'BASH_FUNC_ls%%=() { rm x; }'`) and the callbacks of `mapfile -C`/`readarray -C`/
 * `compgen -C`/`complete -C` are read as command lines, like `trap`.
 * The price, weighed against a narrower list of "evaluating builtins" (which a value carried in
 * a variable walks around): with a Bash deny or ask rule, `echo '$(date)'`, `grep '`' f`,
 * `awk '{print $(NF)}'`, a commit message or here-document with backticks ask (deny under plan
 * and dontAsk) even in bypassPermissions, and `echo '$(date)'` or `grep '`' f` are no longer
 * auto-allowed as read-only. Allow rules for external programs (`Bash(git commit:*)` with
 * `-m 'fix `x`'`) still approve when no deny or ask rule exists. Text that becomes `$(` only at
 * run time (`d='$'; "${d}(...)"`, `printf '\x24'`), or values from files and the environment,
 * are not followed: like a script file, they are for the OS sandbox.
 *
 * "Read-only" Bash (auto-allowed in default, acceptEdits, plan and dontAsk) means read-only and
 * inside: every path the command names resolves inside the workspace or an added directory
 * (`shell/read-only.ts`), and none is covered by a Read deny or ask rule; `/proc`, `/sys`, home
 * dot files and anything outside take the mode's normal course. Read, Glob and Grep inside an added
 * directory are allowed as inside the workspace, and acceptEdits accepts edits there too.
 *
 * This file holds the order above; the Bash-specific parts are in `decide-bash.ts`, the mode's
 * default in `decide-mode.ts`, and the call's description and wording in `decide-call.ts`.
 */
import { analyzeBashCommand, isBashCommandRule, matchBashRuleBroadly } from './bash';
import { allowBash, readCoverOf, readOnlyUnderRules } from './decide-bash';
import {
  describeAction,
  displayPath,
  familyOf,
  parseLists,
  quote,
  type AllowResult,
  type Call,
  type Entry,
  type Outcome,
} from './decide-call';
import { modeDefault } from './decide-mode';
import type { ReadOnlyContext } from '../shell';
import { isInsideDirectory, matchPathPattern, normalizeDirectory, resolveToolPath } from './paths';
import { ruleAppliesTo } from './rules';
import { suggestAllowRule } from './suggest';
import type { PermissionContext, PermissionDecision, PermissionMode, RuleList } from './types';

/**
 * Decide whether the call `toolName(input)` may run under `ctx` (mode, rules, workspace): allow,
 * deny, or ask the user. The reason is written for the model, which reads it when denied.
 */
export function decidePermission(toolName: string, input: unknown, ctx: PermissionContext): PermissionDecision {
  const lists = parseLists(ctx.rules);
  const call = describeCall(toolName, input, ctx, lists);
  const outcome = decide(call, ctx.mode, lists);
  return finish(outcome, call, ctx.mode);
}

/**
 * The deny rule (if any) that forbids reading `path`: for Grep and Glob, which may come across
 * files below their search directory that a `Read(...)` deny rule covers, to leave them out.
 */
export function readDenyRuleFor(
  path: string,
  ctx: Pick<PermissionContext, 'rules' | 'workspace' | 'homeDir'>,
): string | undefined {
  const workspace = normalizeDirectory(ctx.workspace);
  const absolute = resolveToolPath(path, workspace);
  for (const entry of parseLists(ctx.rules).deny) {
    const rule = entry.rule;
    if (rule === undefined || !ruleAppliesTo(rule, 'Read')) continue;
    if (rule.kind === 'tool') return rule.text;
    if (rule.kind === 'path' && matchPathPattern(absolute, rule.pattern, workspace, ctx.homeDir) !== false)
      return rule.text;
  }
  return undefined;
}

function decide(call: Call, mode: PermissionMode, lists: Record<RuleList, Entry[]>): Outcome {
  // 1. deny
  const denied = broadMatch(call, lists.deny);
  if (denied?.kind === 'match') {
    return {
      behavior: 'deny',
      reason: `Denied by rule ${denied.rule} in permissions.deny${denied.detail}.`,
      rule: denied.rule,
    };
  }
  if (call.readCover?.list === 'deny' && call.readCover.sure) {
    return {
      behavior: 'deny',
      reason: `Denied by rule ${call.readCover.rule} in permissions.deny: the command reads ${call.readCover.path}, which the rule does not let any tool read.`,
      rule: call.readCover.rule,
    };
  }
  // 2. plan mode is read-only
  if (mode === 'plan' && !call.readOnly) {
    const explore =
      call.notReadOnly?.outside !== undefined
        ? 'Explore inside the workspace (or ask the user to add the directory)'
        : 'Explore with read-only tools';
    return {
      behavior: 'deny',
      reason: `Denied: plan mode is read-only, and ${describeAction(call)}. ${explore} and present your plan; changes can be made once the user approves it and leaves plan mode.`,
    };
  }
  if (denied?.kind === 'unknown') {
    return { behavior: 'ask', reason: denied.detail, rule: denied.rule, fromRule: true };
  }
  // 3. ask
  const asked = broadMatch(call, lists.ask);
  if (asked?.kind === 'match') {
    return {
      behavior: 'ask',
      reason: `rule ${asked.rule} in permissions.ask requires approval${asked.detail}`,
      rule: asked.rule,
      fromRule: true,
    };
  }
  if (asked?.kind === 'unknown') return { behavior: 'ask', reason: asked.detail, rule: asked.rule, fromRule: true };
  if (call.readCover !== undefined) {
    return {
      behavior: 'ask',
      reason: call.readCover.sure
        ? `the command reads ${call.readCover.path}, and rule ${call.readCover.rule} in permissions.ask requires approval to read it`
        : `the command reads ${call.readCover.path}, and rule ${call.readCover.rule} in permissions.${call.readCover.list} uses ~ but the home directory is unknown, so it cannot be checked`,
      rule: call.readCover.rule,
      fromRule: true,
    };
  }
  // 4. bypassPermissions
  if (mode === 'bypassPermissions') {
    return { behavior: 'allow', reason: 'Allowed: the mode is bypassPermissions and no deny or ask rule matched.' };
  }
  if (call.invalid !== undefined) {
    return { behavior: 'allow', reason: `Allowed to reach the tool, which will reject it: ${call.invalid}.` };
  }
  // 5. allow
  const allowed = call.family === 'bash' ? allowBash(call, lists.allow) : allowOther(call, lists.allow);
  if (allowed.outcome) return allowed.outcome;
  // 6. the mode's default
  return modeDefault(call, mode, allowed.note);
}

function finish(outcome: Outcome, call: Call, mode: PermissionMode): PermissionDecision {
  const rule = outcome.rule === undefined ? {} : { rule: outcome.rule };
  if (outcome.behavior !== 'ask') return { behavior: outcome.behavior, reason: outcome.reason, ...rule };
  if (mode !== 'dontAsk') {
    const clause = outcome.modeClause === undefined ? '' : `; ${outcome.modeClause}`;
    return { behavior: 'ask', reason: `Needs the user's approval: ${outcome.reason}${clause}.`, ...rule };
  }
  if (outcome.fromRule) {
    return {
      behavior: 'deny',
      reason: `Denied: ${outcome.reason}, and the mode is dontAsk, so nobody can be asked.`,
      ...rule,
    };
  }
  const suggestion = suggestAllowRule(call.tool, call.input, call.workspace);
  return {
    behavior: 'deny',
    reason: `Denied: not allowed by any rule and the mode is dontAsk (${outcome.reason}). To permit it, the user can add a rule such as ${suggestion} to permissions.allow.`,
  };
}

// --- the call --------------------------------------------------------------------------------

function describeCall(tool: string, input: unknown, ctx: PermissionContext, lists: Record<RuleList, Entry[]>): Call {
  const workspace = normalizeDirectory(ctx.workspace);
  const added = Array.isArray(ctx.additionalDirectories)
    ? ctx.additionalDirectories.filter((directory) => typeof directory === 'string' && directory.startsWith('/'))
    : [];
  const scope: ReadOnlyContext = { workspace, additionalDirectories: added };
  if (ctx.engine !== undefined) scope.engine = ctx.engine;
  if (ctx.homeDir !== undefined) scope.homeDir = ctx.homeDir;
  const call: Call = {
    tool,
    family: familyOf(tool),
    workspace,
    homeDir: ctx.homeDir,
    roots: [workspace, ...added.map(normalizeDirectory)],
    scope,
    readOnly: true,
    input,
  };
  const fields =
    typeof input === 'object' && input !== null && !Array.isArray(input)
      ? (input as Record<string, unknown>)
      : undefined;
  switch (call.family) {
    case 'bash': {
      const command = fields?.command;
      if (typeof command !== 'string' || command.trim() === '') {
        call.invalid = 'the input has no command string';
        return call;
      }
      call.bash = analyzeBashCommand(command, ctx.engine);
      call.readRules = [...lists.deny, ...lists.ask].filter(
        (entry) => entry.rule !== undefined && ruleAppliesTo(entry.rule, 'Read'),
      );
      const verdict = readOnlyUnderRules(command, call);
      call.readOnly = verdict.readOnly;
      if (!verdict.readOnly) call.notReadOnly = verdict;
      const cover = readCoverOf(call);
      if (cover !== undefined) call.readCover = cover;
      return call;
    }
    case 'read':
    case 'edit': {
      call.readOnly = call.family === 'read';
      const key = tool === 'Glob' || tool === 'Grep' ? 'path' : 'file_path';
      const value = fields?.[key];
      if (value === undefined && key === 'path' && fields !== undefined) {
        call.path = workspace; // Glob and Grep search the workspace root when no path is given
      } else if (typeof value !== 'string' || value === '' || value.includes('\0')) {
        call.invalid = `the input has no valid ${key}`;
      } else {
        call.path = resolveToolPath(value, workspace);
      }
      return call;
    }
    default:
      return call;
  }
}

// --- deny and ask: any part matches ----------------------------------------------------------

type BroadResult = { kind: 'match'; rule: string; detail: string } | { kind: 'unknown'; rule: string; detail: string };

/** The first rule of `entries` matching the call; a sure match beats one that cannot be evaluated. */
function broadMatch(call: Call, entries: Entry[]): BroadResult | undefined {
  let unknown: BroadResult | undefined;
  for (const entry of entries) {
    const where = `permissions.${entry.list}`;
    const rule = entry.rule;
    if (rule === undefined) {
      // An invalid deny/ask rule must not silently stop protecting: if it names this tool, ask.
      const name = entry.text.trim().split('(')[0]?.trim() ?? '';
      if (unknown === undefined && ruleAppliesTo({ kind: 'tool', text: name, tool: name }, call.tool)) {
        unknown = {
          kind: 'unknown',
          rule: entry.text,
          detail: `rule ${entry.text} in ${where} is invalid (${entry.error}), so it cannot be checked`,
        };
      }
      continue;
    }
    if (!ruleAppliesTo(rule, call.tool)) continue;
    if (rule.kind === 'tool') return { kind: 'match', rule: rule.text, detail: '' };
    if (call.invalid !== undefined) continue;
    if (isBashCommandRule(rule) && call.bash) {
      const result = matchBashRuleBroadly(rule, call.bash);
      if (result?.kind === 'match')
        return { kind: 'match', rule: rule.text, detail: ` (it matches ${quote(result.text)})` };
      if (result?.kind === 'possible' && unknown === undefined) {
        unknown = {
          kind: 'unknown',
          rule: rule.text,
          detail: `rule ${rule.text} in ${where} cannot be ruled out: ${result.why}`,
        };
      }
    } else if (rule.kind === 'path' && call.path !== undefined) {
      const result = matchPathPattern(call.path, rule.pattern, call.workspace, call.homeDir);
      if (result === true) return { kind: 'match', rule: rule.text, detail: ` (it matches ${displayPath(call)})` };
      if (result === 'unknown' && unknown === undefined && !isInsideDirectory(call.path, call.workspace)) {
        unknown = {
          kind: 'unknown',
          rule: rule.text,
          detail: `rule ${rule.text} in ${where} uses ~ but the home directory is unknown, so it cannot be checked for ${call.path}`,
        };
      }
    } else if (rule.kind === 'other' && unknown === undefined) {
      unknown = { kind: 'unknown', rule: rule.text, detail: `rule ${rule.text} in ${where} cannot be evaluated here` };
    }
  }
  return unknown;
}

// --- allow: strict -----------------------------------------------------------------------------

function allowOther(call: Call, entries: Entry[]): AllowResult {
  for (const entry of entries) {
    const rule = entry.rule;
    if (rule === undefined || !ruleAppliesTo(rule, call.tool)) continue;
    const matches =
      rule.kind === 'tool' ||
      (rule.kind === 'path' &&
        call.path !== undefined &&
        matchPathPattern(call.path, rule.pattern, call.workspace, call.homeDir) === true);
    if (matches)
      return {
        outcome: { behavior: 'allow', reason: `Allowed by rule ${rule.text} in permissions.allow.`, rule: rule.text },
      };
  }
  return {};
}
