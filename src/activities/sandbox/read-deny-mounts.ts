import path from 'node:path';
import { parseRule } from '../../shared/permissions';
import type { JobSandbox } from '../../shared/sandbox';

/** A gitignore segment that matches more than one name. */
const WILDCARD = /[*?[\\]/;

/**
 * The places outside the workspace that a job's `Read(...)` deny rules name outright, as absolute
 * paths for the sandbox to hide from its commands (as `sandbox.filesystem.denyRead` does):
 * `Read(//etc/app.key)` the file, `Read(~/.aws/**)` the home folder's. Then no command reads them,
 * whatever name it uses (`cat link`, where the link leads there). A rule with a wildcard
 * (`Read(**\/.env)`, `Read(*.pem)`) names no one place and is left to the permission rules; a
 * bare `Read` is about the Read tool, not every file. Places inside the workspace are left to the
 * rules too: hidden, their tracked files would look deleted to git, and `git commit -a` would
 * commit the deletion.
 */
export function readDenyHiddenPaths(rules: readonly string[], workspace: string, homeDir: string): string[] {
  const places: string[] = [];
  for (const text of rules) {
    const parsed = parseRule(text);
    if (!parsed.ok || parsed.rule.tool !== 'Read' || parsed.rule.kind !== 'path') continue;
    const { anchor, up, segments } = parsed.rule.pattern;
    const named = segments.at(-1) === '**' ? segments.slice(0, -1) : segments;
    if (named.length === 0 || named.some((segment) => segment === '**' || WILDCARD.test(segment))) continue;
    const base = anchor === 'root' ? '/' : anchor === 'home' ? homeDir : workspace;
    const place = path.resolve(base, ...Array<string>(up).fill('..'), ...named);
    const inWorkspace = place === workspace || place.startsWith(`${workspace}/`);
    if (!inWorkspace) places.push(place);
  }
  return places;
}

/** `policy` with `places` hidden too. */
export function withHiddenPlaces(policy: JobSandbox, places: readonly string[]): JobSandbox {
  if (places.length === 0) return policy;
  const filesystem = policy.filesystem ?? {};
  return { ...policy, filesystem: { ...filesystem, denyRead: [...(filesystem.denyRead ?? []), ...places] } };
}
