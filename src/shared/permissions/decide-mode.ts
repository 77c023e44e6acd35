/**
 * The mode's default in `decide.ts`, for a call no rule decided: what each mode does with reads,
 * edits (acceptEdits and its protected paths) and Bash commands. Pure code.
 */
import type { BashAnalysis } from './bash';
import { displayPath, quote, type Call, type Outcome } from './decide-call';
import { isInsideDirectory, isInWorkingDirectories, relativeSegments } from './paths';
import { engineAtLeast, type PermissionMode } from './types';
import { WORKSPACE_PROTECTED_PATHS } from '../protected-names';

/**
 * Directories whose files are never edited automatically by acceptEdits (Claude Code: "writes to
 * .git, .claude, .vscode and .idea directories still prompt"; `.claude/commands`, `agents` and
 * `skills` are exempt). Matched at any depth inside the workspace.
 */
const PROTECTED_DIRECTORIES = new Set(['.git', '.claude', '.vscode', '.idea']);
const CLAUDE_EXEMPT = new Set(['commands', 'agents', 'skills']);

export function modeDefault(call: Call, mode: PermissionMode, note: string | undefined): Outcome {
  switch (call.family) {
    case 'todo':
      return { behavior: 'allow', reason: 'Allowed: TodoWrite only updates the task list.' };
    case 'unknown':
      return { behavior: 'allow', reason: `Allowed: ${call.tool} is not a permission-checked tool here.` };
    case 'read': {
      const path = call.path as string;
      if (isInWorkingDirectories(path, call.roots, call.homeDir)) {
        const where = isInsideDirectory(path, call.workspace) ? 'the workspace' : 'an added directory';
        return { behavior: 'allow', reason: `Allowed: ${call.tool} only reads, inside ${where} (mode ${mode}).` };
      }
      return {
        behavior: 'ask',
        reason: `${path} is outside the workspace ${call.workspace}${call.roots.length > 1 ? ' and its added directories' : ''} and no rule in permissions.allow covers it`,
        modeClause: `reading outside the workspace needs an allow rule such as Read(/${path}) or the user's approval`,
      };
    }
    case 'edit': {
      const path = call.path as string;
      const root = call.roots.find((candidate) => isInsideDirectory(path, candidate));
      const inside = root !== undefined && isInWorkingDirectories(path, [root], call.homeDir);
      if (mode === 'acceptEdits') {
        if (!inside) {
          return {
            behavior: 'ask',
            reason: `${path} is outside the workspace ${call.workspace} and no rule in permissions.allow covers it`,
            modeClause: `mode acceptEdits only accepts edits inside the workspace${call.roots.length > 1 ? ' and its added directories' : ''}`,
          };
        }
        const protectedDir = protectedDirectory(path, root as string, call.scope.engine, call.workspace);
        if (protectedDir === undefined) {
          return {
            behavior: 'allow',
            reason: `Allowed: mode acceptEdits accepts file edits inside the workspace (${displayPath(call)}).`,
          };
        }
        return {
          behavior: 'ask',
          reason: protectedDir.endsWith('/')
            ? `${displayPath(call)} is in the protected directory ${protectedDir} and no rule in permissions.allow covers it`
            : `${displayPath(call)} is a protected file (it can make something run when the repository is opened) and no rule in permissions.allow covers it`,
          modeClause: engineAtLeast(call.scope.engine, 2)
            ? 'mode acceptEdits never edits protected paths (.git, .claude, .vscode, .idea anywhere; .mcp.json, .gitmodules, .durable-agent and the shell start-up files at the workspace root) without approval'
            : 'mode acceptEdits never edits protected directories (.git, .claude, .vscode, .idea) without approval',
        };
      }
      return {
        behavior: 'ask',
        reason: `no rule in permissions.allow covers ${call.tool} of ${displayPath(call)}`,
        modeClause: `mode ${mode} asks before changing files`,
      };
    }
    case 'bash': {
      if (note === undefined && call.readOnly) {
        return { behavior: 'allow', reason: `Allowed: the command only reads (mode ${mode}).` };
      }
      const why = note ?? `no rule in permissions.allow covers ${quote((call.bash as BashAnalysis).command.trim())}`;
      const refusal = call.notReadOnly;
      const modeClause =
        refusal?.outside !== undefined
          ? `mode ${mode} asks before a command reads outside the workspace and its added directories (${refusal.outside})`
          : refusal?.readRule === true
            ? `mode ${mode} runs reading commands without asking only where no Read rule applies (${refusal.why.replace(/^it /, 'the command ')})`
            : `mode ${mode} asks before running commands that may change something`;
      return { behavior: 'ask', reason: why, modeClause };
    }
  }
}

function protectedDirectory(
  path: string,
  root: string,
  engine: number | undefined,
  workspace: string,
): string | undefined {
  const segments = relativeSegments(path, root);
  // Generation 2: the names the sandbox keeps read-only at the workspace root, for every tool.
  const first = segments[0];
  if (
    engineAtLeast(engine, 2) &&
    root === workspace &&
    first !== undefined &&
    WORKSPACE_PROTECTED_PATHS.includes(first)
  ) {
    const exempt = first === '.claude' && CLAUDE_EXEMPT.has(segments[1] as string) && segments.length > 2;
    if (!exempt) return segments.length > 1 ? `${first}/` : first;
  }
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    if (!PROTECTED_DIRECTORIES.has(segment)) continue;
    if (segment === '.claude' && CLAUDE_EXEMPT.has(segments[i + 1] as string) && i + 2 < segments.length) continue;
    return segments.slice(0, i + 1).join('/') + '/';
  }
  return undefined;
}
