import fs from 'node:fs';

/** A systemd unit file: each section's keys, each with its values in order (keys may repeat). */
export type UnitFile = Map<string, Map<string, string[]>>;

/** Parse a unit file as systemd does: `[Section]`, `Key=value`, `#`/`;` comments, `\` continuations. */
export function parseUnit(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header?.[1]) {
      section = new Map();
      unit.set(header[1], section);
      continue;
    }
    const eq = line.indexOf('=');
    if (!section || eq < 0) throw new Error(`not a unit file line: ${raw}`);
    const key = line.slice(0, eq).trim();
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return unit;
}

/** The last value of `key` in `section` (what systemd uses for a single-valued setting). */
export function unitValue(unit: UnitFile, section: string, key: string): string | undefined {
  return unit.get(section)?.get(key)?.at(-1);
}

/** Every value of `key` in `section`. */
export function unitValues(unit: UnitFile, section: string, key: string): string[] {
  return unit.get(section)?.get(key) ?? [];
}

/** `Environment=` values as a name/value object (`A=1 "B=two words"` forms included). */
export function unitEnvironment(unit: UnitFile): Record<string, string> {
  const env: Record<string, string> = {};
  for (const value of unitValues(unit, 'Service', 'Environment')) {
    for (const match of value.matchAll(/"([^"]*)"|(\S+)/g)) {
      const assignment = match[1] ?? match[2] ?? '';
      const eq = assignment.indexOf('=');
      if (eq > 0) env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
    }
  }
  return env;
}

/** A systemd time span (`12min`, `5s`, `1h 30min`, `720`: seconds) in milliseconds. */
export function systemdTimeSpanMs(value: string): number {
  const units: Record<string, number> = {
    ms: 1,
    s: 1_000,
    sec: 1_000,
    m: 60_000,
    min: 60_000,
    h: 3_600_000,
    hr: 3_600_000,
  };
  let total = 0;
  const rest = value.replace(/(\d+)\s*([a-z]*)\s*/g, (_match, count: string, unit: string) => {
    const factor = units[unit || 's'];
    if (factor === undefined) throw new Error(`unknown time unit "${unit}" in "${value}"`);
    total += Number(count) * factor;
    return '';
  });
  if (rest !== '' || value.trim() === '') throw new Error(`not a systemd time span: "${value}"`);
  return total;
}

/**
 * An `EnvironmentFile=`'s variables, as systemd reads it: `NAME=value` lines, `#` comments, values
 * optionally quoted. `documented` also lists the names of commented-out `#NAME=value` examples.
 */
export function readEnvironmentFile(file: string): { env: Record<string, string>; documented: string[] } {
  const env: Record<string, string> = {};
  const documented: string[] = [];
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    const example = /^#\s*([A-Z][A-Z0-9_]*)=/.exec(line);
    if (example?.[1]) documented.push(example[1]);
    if (line === '' || line.startsWith('#')) continue;
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!assignment?.[1]) throw new Error(`${file}: not an environment file line: ${raw}`);
    env[assignment[1]] = (assignment[2] ?? '').replace(/^(["'])(.*)\1$/, '$2');
  }
  return { env, documented: [...documented, ...Object.keys(env)] };
}
