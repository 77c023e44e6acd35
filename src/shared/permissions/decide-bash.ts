/**
 * What `decide.ts` does for Bash alone: the read-only verdict under Read deny and ask rules, the
 * reads of known reading programs that such a rule covers, and the strict allow rules (every part
 * of a command line approved on its own). Pure code.
 */
import {
  allowRuleMatchesSubCommand,
  bashRuleMatchesText,
  hiddenCodeIn,
  isBashCommandRule,
  plainProgram,
  type BashAnalysis,
} from './bash';
import { classifyReadOnlyBash, readsOfProgram, type ReadOnlyVerdict, type ShellSubCommand } from '../shell';
import { quote, type AllowResult, type Call, type Entry } from './decide-call';
import { matchPathPattern, pathPatternMayCover } from './paths';
import { ruleAppliesTo } from './rules';
import type { ParsedRule } from './types';

/**
 * The read-only verdict for a Bash command, where a read that a Read deny or ask rule covers
 * does not count as read-only: Bash cannot skip such files as the Read, Grep and Glob tools do.
 */
export function readOnlyUnderRules(command: string, call: Call): ReadOnlyVerdict {
  const verdict = classifyReadOnlyBash(command, call.scope);
  if (!verdict.readOnly) return verdict;
  for (const read of verdict.reads) {
    for (const entry of call.readRules ?? []) {
      const rule = entry.rule as ParsedRule;
      const covered =
        rule.kind === 'tool' ||
        (rule.kind === 'path' &&
          (read.tree
            ? pathPatternMayCover(read.path, rule.pattern, call.workspace, call.homeDir)
            : matchPathPattern(read.path, rule.pattern, call.workspace, call.homeDir) !== false));
      if (covered) {
        const what = read.tree ? `everything below ${read.path}` : read.path;
        return {
          readOnly: false,
          why: `it reads ${what}, and rule ${rule.text} in permissions.${entry.list} covers reading there`,
          readRule: true,
        };
      }
    }
  }
  return verdict;
}

/**
 * The first path that a known reading program in the command (`cat`, `head`, `grep`, ..., also
 * inside wrappers, substitutions and `sh -c`) reads and that a Read deny rule (else a Read ask
 * rule) covers. Claude Code's Read rules are meant for its file tools, but a `cat ~/.ssh/id_rsa`
 * is the same read: when the command names the path, the rule holds. A whole tree that merely
 * may contain such a path (`grep -r x .`) is not covered here; it only stops counting as
 * read-only (see readOnlyUnderRules). 'unknown' (a `~` rule without a home directory) asks.
 */
export function readCoverOf(call: Call): Call['readCover'] {
  const reads = (call.bash as BashAnalysis).reading.invocations.flatMap((invocation) =>
    invocation.program === undefined
      ? []
      : (readsOfProgram(invocation.program, invocation.words.slice(1), call.scope) ?? []),
  );
  let ask: Call['readCover'];
  for (const entry of call.readRules ?? []) {
    const rule = entry.rule as ParsedRule;
    for (const read of reads) {
      const result =
        rule.kind === 'tool' ||
        (rule.kind === 'path' && matchPathPattern(read.path, rule.pattern, call.workspace, call.homeDir));
      if (result === true && entry.list === 'deny')
        return { list: 'deny', rule: rule.text, path: read.path, sure: true };
      if (result !== false && ask === undefined) {
        ask = { list: entry.list, rule: rule.text, path: read.path, sure: result === true };
      }
    }
  }
  return ask;
}

export function allowBash(call: Call, entries: Entry[]): AllowResult {
  const rules = entries
    .map((entry) => entry.rule)
    .filter((rule): rule is ParsedRule => rule !== undefined && ruleAppliesTo(rule, 'Bash'));
  const whole = rules.find((rule) => rule.kind === 'tool');
  if (whole)
    return {
      outcome: { behavior: 'allow', reason: `Allowed by rule ${whole.text} in permissions.allow.`, rule: whole.text },
    };
  const analysis = call.bash as BashAnalysis;
  const split = analysis.split;
  if (!split.ok) {
    const note =
      split.problem === 'substitution'
        ? `the command uses ${split.detail}, and permission rules never approve command substitution automatically`
        : `the command cannot be checked part by part (${split.detail}), so permission rules cannot approve it automatically`;
    return { note };
  }
  const commandRules = rules.filter(isBashCommandRule);
  // An exact rule naming the whole line approves exactly that line (the user approved that text).
  const exactWhole = commandRules.find((rule) => rule.kind === 'bash-exact' && rule.command === split.text);
  if (exactWhole) {
    return {
      outcome: {
        behavior: 'allow',
        reason: `Allowed by rule ${exactWhole.text} in permissions.allow.`,
        rule: exactWhole.text,
      },
    };
  }
  const parts: Array<{ sub: ShellSubCommand; rule?: string; readOnly: boolean }> = split.commands.map((sub) => {
    const rule = commandRules.find((candidate) => allowRuleMatchesSubCommand(candidate, sub, call.scope.engine));
    return { sub, rule: rule?.text, readOnly: rule === undefined && readOnlyUnderRules(sub.text, call).readOnly };
  });
  const uncovered = parts.find((part) => part.rule === undefined && !part.readOnly);
  if (uncovered && plainProgram(uncovered.sub) === false) {
    const program = uncovered.sub.tokens.find((token) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(token.raw));
    return {
      note: `the program ${quote(program?.raw ?? uncovered.sub.text)} is only known when the command runs, and permission rules never approve such a command automatically`,
    };
  }
  const hidden = uncovered === undefined ? undefined : hiddenCodeIn(uncovered.sub, call.scope.engine);
  if (hidden !== undefined) {
    return {
      note: `${hidden.why}, and permission rules never approve code bash may run from text automatically`,
    };
  }
  if (uncovered) {
    const redirect = uncovered.sub.fileWrites.length > 0;
    const anyRuleMatchesWithoutRedirect =
      redirect && commandRules.some((rule) => bashRuleMatchesText(rule, uncovered.sub.textWithoutRedirects));
    const what =
      split.commands.length > 1 ? `${quote(uncovered.sub.text)} (one part of the command)` : quote(uncovered.sub.text);
    const note = anyRuleMatchesWithoutRedirect
      ? `${what} writes to ${uncovered.sub.fileWrites.map(quote).join(', ')}, and a redirection to a file is only approved by an allow rule naming the exact command`
      : split.commands.length > 1
        ? `${what} is not allowed by any rule in permissions.allow, and every part of a compound command must be allowed on its own`
        : `no rule in permissions.allow covers ${what}`;
    return { note };
  }
  const ruled = parts.filter((part) => part.rule !== undefined);
  if (ruled.length === 0) return {}; // read-only throughout: the mode decides
  const distinct = [...new Set(ruled.map((part) => part.rule as string))];
  if (parts.length === 1) {
    return {
      outcome: { behavior: 'allow', reason: `Allowed by rule ${distinct[0]} in permissions.allow.`, rule: distinct[0] },
    };
  }
  const summary = parts
    .map((part) => `${quote(part.sub.text)}: ${part.rule !== undefined ? `rule ${part.rule}` : 'read-only'}`)
    .join('; ');
  return {
    outcome: {
      behavior: 'allow',
      reason: `Allowed: every part of the command is allowed on its own (${summary}) by permissions.allow.`,
      rule: distinct.join(', '),
    },
  };
}
