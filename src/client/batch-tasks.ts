import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { TASK_ID_PATTERN } from '../shared/batch';
import type { BatchTaskSpec } from '../shared/batch';
import { PERMISSION_MODES } from '../shared/permissions';
import { buildSessionInput } from './session-options';
import type { RunFlags } from './session-options';

/** One line of a batch's tasks file. */
const taskLine = z
  .strictObject({
    id: z
      .string()
      .regex(TASK_ID_PATTERN, 'letters, digits, ".", "_" and "-" only, starting with a letter or digit, at most 100')
      .optional(),
    prompt: z.string().refine((text) => text.trim() !== '', 'is blank'),
    workspace: z.string().min(1).optional(),
    repo: z.string().min(1).optional(),
    ref: z
      .string()
      .min(1)
      .refine((ref) => !ref.startsWith('-'), 'may not start with "-": give a branch, tag or commit')
      .optional(),
    maxTurns: z.number().int().positive().optional(),
    maxBudgetUsd: z.number().positive().finite().optional(),
    model: z.string().min(1).optional(),
    permissionMode: z.enum(PERMISSION_MODES).optional(),
    tools: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .refine((task) => (task.workspace === undefined) !== (task.repo === undefined), {
    message: 'give either "workspace" (a directory) or "repo" (with an optional "ref"), not both and not neither',
  })
  .refine((task) => task.ref === undefined || task.repo !== undefined, { message: '"ref" needs a "repo"' });

/** The most problems a tasks file's error lists before it says how many more there are. */
const MAX_LISTED_PROBLEMS = 10;

/** A repo given as a URL (`https://`, `ssh://`, `git@host:path`) rather than a local path. */
function isRemoteRepo(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/\s]+@[^/\s]+:/.test(repo);
}

/**
 * Read a batch's tasks file (JSONL, one task per line) into the tasks the batch runs. Relative
 * workspaces and repos are taken from the file's folder. Each task's job gets `flags` (the batch's
 * options) with the task's own limits over them, checked as `run` checks its options; every
 * problem in the file is reported at once, with its line, before anything starts.
 */
export function readBatchTasks(file: string, flags: RunFlags, env: NodeJS.ProcessEnv): BatchTaskSpec[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`the tasks file ${file} cannot be read: ${(error as Error).message}`);
  }
  const base = path.dirname(path.resolve(file));
  const problems: string[] = [];
  const tasks: BatchTaskSpec[] = [];
  const lineOf = new Map<string, number>();
  for (const [index, raw] of text.split('\n').entries()) {
    const line = index + 1;
    if (raw.trim() === '') continue;
    const where = `${path.basename(file)}:${line}`;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      problems.push(`${where}: not JSON (${(error as Error).message}); each line is one task object`);
      continue;
    }
    const parsed = taskLine.safeParse(json);
    if (!parsed.success) {
      const given = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
      const what = parsed.error.issues
        .map((issue) => {
          if (issue.path.length === 0) return issue.message;
          const key = issue.path.join('.');
          // zod says "expected string, received undefined" for a key the line does not have.
          const missing = issue.path.length === 1 && issue.code === 'invalid_type' && !(String(issue.path[0]) in given);
          return missing ? `"${key}" is missing` : `"${key}" ${issue.message}`;
        })
        .join('; ');
      problems.push(`${where}: ${what}`);
      continue;
    }
    const task = parsed.data;
    const id = task.id ?? `line-${line}`;
    const earlier = lineOf.get(id);
    if (earlier !== undefined) {
      problems.push(`${where}: task id "${id}" is also on line ${earlier}; every task needs its own id`);
      continue;
    }
    lineOf.set(id, line);
    const repo = task.repo && !isRemoteRepo(task.repo) ? path.resolve(base, task.repo) : task.repo;
    if (
      repo &&
      !isRemoteRepo(repo) &&
      !fs.existsSync(path.join(repo, '.git')) &&
      !fs.existsSync(path.join(repo, 'HEAD'))
    ) {
      problems.push(`${where}: "repo" ${repo} is not a git repository`);
      continue;
    }
    try {
      const input = buildSessionInput(
        task.prompt,
        {
          ...flags,
          // A task from a repo gets its workspace when its clone is made; its options are checked here.
          cwd: task.workspace !== undefined ? path.resolve(base, task.workspace) : base,
          ...(task.maxTurns !== undefined ? { maxTurns: task.maxTurns } : {}),
          ...(task.maxBudgetUsd !== undefined ? { maxBudgetUsd: task.maxBudgetUsd } : {}),
          ...(task.model !== undefined ? { model: task.model } : {}),
          ...(task.permissionMode !== undefined ? { permissionMode: task.permissionMode } : {}),
          ...(task.tools !== undefined ? { tools: Array.isArray(task.tools) ? task.tools.join(',') : task.tools } : {}),
        },
        env,
        'a batch (nobody answers approvals)',
      );
      tasks.push({
        id,
        input: repo ? { ...input, workspace: '' } : input,
        ...(repo ? { worktree: { repo, ref: task.ref ?? 'HEAD' } } : {}),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      problems.push(`${where}: ${message.replace(/--cwd /, '"workspace" ')}`);
    }
  }
  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    const more = problems.length - listed.length;
    throw new InvalidArgumentError(
      `the tasks file ${file} has ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing was started:\n  ` +
        listed.join('\n  ') +
        (more > 0 ? `\n  ... and ${more} more` : ''),
    );
  }
  if (tasks.length === 0) {
    throw new InvalidArgumentError(
      `the tasks file ${file} has no tasks: write one JSON object per line, e.g. {"id":"fix-1","prompt":"Fix the failing test","workspace":"./repo"}`,
    );
  }
  return tasks;
}
