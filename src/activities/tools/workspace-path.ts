import { lstat, realpath } from 'node:fs/promises';
import * as path from 'node:path';

/** A path that was checked to lie inside the workspace. */
export interface WorkspacePath {
  /** Absolute path with every existing symlink resolved; operate on this one. */
  absolute: string;
  /** The same path relative to the workspace root ('.' for the root itself), for messages. */
  relative: string;
}

export type WorkspacePathResult = ({ ok: true } & WorkspacePath) | { ok: false; error: string };

/**
 * Resolve a model-supplied path (absolute or relative to `workspace`) and refuse it unless it
 * lies inside the workspace after `..` segments and symlinks are resolved. Paths that do not exist
 * yet are allowed (Write creates them): the nearest existing ancestor is realpath'd and the
 * missing tail appended, so a symlinked directory cannot lead a new file outside.
 */
export async function resolveWorkspacePath(workspace: string, input: string): Promise<WorkspacePathResult> {
  if (input.includes('\0')) return { ok: false, error: 'The path must not contain NUL bytes.' };
  const root = await realpath(workspace);
  const lexical = path.resolve(root, input);
  const outside = (candidate: string) => !isInside(root, candidate);
  const refusal = {
    ok: false as const,
    error: `Path "${input}" is outside the workspace (${root}). Only files inside the workspace can be accessed; use a path relative to the workspace root.`,
  };
  if (outside(lexical)) return refusal;

  const resolved = await resolveExistingPrefix(lexical);
  if (!resolved.ok) return resolved;
  if (outside(resolved.absolute)) {
    return {
      ok: false,
      error: `Path "${input}" resolves through a symbolic link to ${resolved.absolute}, which is outside the workspace (${root}).`,
    };
  }
  return { ok: true, absolute: resolved.absolute, relative: path.relative(root, resolved.absolute) || '.' };
}

/** True when `candidate` is `root` or below it (both absolute and normalised). */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  // Compare whole segments: a child named '..cache' is inside.
  return relative === '' || (relative !== '..' && !relative.startsWith('..' + path.sep) && !path.isAbsolute(relative));
}

async function resolveExistingPrefix(
  absolute: string,
): Promise<{ ok: true; absolute: string } | { ok: false; error: string }> {
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    let exists = true;
    try {
      await lstat(current);
    } catch (error) {
      if (!isMissing(error)) throw error;
      exists = false;
    }
    if (exists) {
      try {
        const real = await realpath(current);
        return { ok: true, absolute: path.join(real, ...missing.reverse()) };
      } catch (error) {
        // lstat saw an entry realpath cannot follow: a dangling or looping symlink. Writing
        // through it would create its target, wherever that is, so refuse.
        if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ELOOP') {
          return { ok: false, error: `Path ${current} is a broken or looping symbolic link.` };
        }
        throw error;
      }
    }
    const parent = path.dirname(current);
    if (parent === current) return { ok: true, absolute };
    missing.push(path.basename(current));
    current = parent;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
