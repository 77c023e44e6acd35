import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { matchPathPattern, parseRule, type PathPattern } from '../../shared/permissions';
import { pathPatternMayCover } from '../../shared/permissions/paths';
import type { ToolContext } from './tool-context';
import { isInside } from './workspace-path';

/**
 * Appended to a Grep or Glob result that left files out because a `Read(...)` deny rule covers
 * them. It names neither the files nor the rules: their names are what the rule protects.
 */
export const WITHHELD_NOTE =
  '(Some results were withheld: a Read deny rule in permissions.deny covers the files they are in.)';

/** A `Read` rule the tools can evaluate: all of Read (`Read`) or a path pattern (`Read(./secrets/**)`). */
interface ReadRule {
  text: string;
  /** Undefined for a bare `Read`, which covers every file. */
  pattern?: PathPattern;
}

/** Files checked at once when filtering a listing: enough to be fast, few enough to keep file handles free. */
const BATCH = 256;

/**
 * The job's `Read(...)` deny rules, evaluated by the tools on what they really touch. The workflow
 * decides on the path the model wrote; this re-checks the real path (symlinks resolved) of the
 * file Read opens and of every file Grep and Glob come across, with the permission engine's own
 * matcher. A path is checked in every spelling that names it: as listed or written, resolved, and
 * with the workspace root spelled as given or as its real path.
 */
export class ReadDenyGuard {
  private readonly realCache = new Map<string, Promise<string | undefined>>();

  private constructor(
    private readonly rules: readonly ReadRule[],
    /** The workspace root: its real path first, then the spelling the context gave, if different. */
    private readonly roots: readonly string[],
    private readonly homeDir: string | undefined,
  ) {}

  /** A guard for `ctx`, or undefined when no deny rule applies to reading (the tools then change nothing). */
  static async create(ctx: Pick<ToolContext, 'workspace' | 'readDenyRules'>): Promise<ReadDenyGuard | undefined> {
    const rules: ReadRule[] = [];
    for (const text of ctx.readDenyRules) {
      const parsed = parseRule(text);
      // An invalid rule cannot be evaluated; the job refuses such settings before any tool runs.
      if (!parsed.ok || parsed.rule.tool !== 'Read') continue;
      if (parsed.rule.kind === 'tool') rules.push({ text: parsed.rule.text });
      else if (parsed.rule.kind === 'path') rules.push({ text: parsed.rule.text, pattern: parsed.rule.pattern });
    }
    if (rules.length === 0) return undefined;
    const given = path.resolve(ctx.workspace);
    const real = await realpath(given);
    return new ReadDenyGuard(rules, real === given ? [real] : [real, given], safeHomeDir());
  }

  /**
   * The rule that forbids reading `absolute` as spelled (no symlink resolved), or undefined.
   * A path inside the workspace is also checked under the other spelling of the workspace root.
   */
  ruleForPath(absolute: string): string | undefined {
    const normalised = path.resolve(absolute);
    for (const spelling of this.spellings(normalised)) {
      for (const rule of this.rules) {
        if (rule.pattern === undefined) return rule.text;
        // 'unknown' (a `~` rule with no home directory) counts as a match: refuse rather than guess.
        if (matchPathPattern(spelling.path, rule.pattern, spelling.workspace, this.homeDir) !== false) return rule.text;
      }
    }
    return undefined;
  }

  /** The rule that forbids reading `absolute` or anything below it, or undefined. */
  ruleForTree(absolute: string): string | undefined {
    const direct = this.ruleForPath(absolute);
    if (direct !== undefined) return direct;
    const normalised = path.resolve(absolute);
    for (const spelling of this.spellings(normalised)) {
      for (const rule of this.rules) {
        if (rule.pattern && pathPatternMayCover(spelling.path, rule.pattern, spelling.workspace, this.homeDir)) {
          return rule.text;
        }
      }
    }
    return undefined;
  }

  /** A rule to name when a check gives up without finding one. */
  get firstRule(): string {
    return this.rules[0]?.text ?? 'a Read deny rule';
  }

  /**
   * The rule that forbids reading a file a listing named (relative to `cwd`): checked as listed
   * and at its real path. A file whose real path cannot be found (gone meanwhile, or a name the
   * listing split) cannot be checked and counts as denied.
   */
  async ruleForListed(file: string, cwd: string): Promise<string | undefined> {
    const absolute = path.resolve(cwd, file);
    const lexical = this.ruleForPath(absolute);
    if (lexical !== undefined) return lexical;
    const real = await this.realPath(absolute);
    if (real === undefined) return this.firstRule;
    return real === absolute ? undefined : this.ruleForPath(real);
  }

  /** The files (relative to `cwd`) no rule denies, in their order, and whether any was left out. */
  async filterListed(files: readonly string[], cwd: string): Promise<{ kept: string[]; withheld: boolean }> {
    const kept: string[] = [];
    let withheld = false;
    for (let i = 0; i < files.length; i += BATCH) {
      const batch = files.slice(i, i + BATCH);
      const denied = await Promise.all(batch.map((file) => this.ruleForListed(file, cwd)));
      batch.forEach((file, j) => {
        if (denied[j] === undefined) kept.push(file);
        else withheld = true;
      });
    }
    return { kept, withheld };
  }

  private realPath(absolute: string): Promise<string | undefined> {
    let cached = this.realCache.get(absolute);
    if (!cached) {
      cached = realpath(absolute).then(
        (real) => real,
        () => undefined,
      );
      this.realCache.set(absolute, cached);
    }
    return cached;
  }

  /** `absolute` under each spelling of the workspace root, paired with that spelling. */
  private spellings(absolute: string): { path: string; workspace: string }[] {
    const out = this.roots.map((workspace) => ({ path: absolute, workspace }));
    const [real, given] = this.roots;
    if (real === undefined || given === undefined) return out;
    if (isInside(real, absolute)) out.push({ path: path.join(given, path.relative(real, absolute)), workspace: given });
    if (isInside(given, absolute)) out.push({ path: path.join(real, path.relative(given, absolute)), workspace: real });
    return out;
  }
}

/** The message Read gives for a file a deny rule covers: it names the rule, not the file's content or real path. */
export function readDeniedMessage(written: string, rule: string): string {
  return `Permission to read ${written} has been denied by the rule ${rule} in permissions.deny (checked on the path it really leads to, symbolic links resolved).`;
}

/** The message Grep and Glob give when the directory or file to search is itself covered by a deny rule. */
export function searchDeniedMessage(tool: string, written: string, rule: string): string {
  return `Permission to search ${written} with ${tool} has been denied by the rule ${rule} in permissions.deny (checked on the path it really leads to, symbolic links resolved).`;
}

/** The rule covering a search path as written (relative to `workspace`) or as resolved, if any. */
export function ruleForTarget(
  guard: ReadDenyGuard,
  workspace: string,
  written: string,
  resolved: string,
): string | undefined {
  return guard.ruleForPath(path.resolve(workspace, written)) ?? guard.ruleForPath(resolved);
}

function safeHomeDir(): string | undefined {
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}
