/**
 * The doc check: every command in the README and docs/*.md parses as written, every relative link
 * and #anchor resolves, and the CLI reference names every command and flag the CLI has. A renamed
 * flag, a removed npm script or a moved heading fails here instead of misleading a reader.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { argvProblem } from '../src/client/argv-check';
import { buildProgram } from '../src/client/cli';
import { findTemporalBinary } from '../src/client/temporal-binary';
import {
  COMMAND_LANGUAGES,
  DATA_LANGUAGES,
  blockCommands,
  docPages,
  fencedBlocks,
  pageAnchors,
  pageLinks,
  readPage,
  root,
  splitCommandLine,
} from './support/doc-commands';
import type { DocCommand } from './support/doc-commands';

/**
 * Commands the check does not run or parse, each with why. Anything not here and not checked
 * below fails, so a new kind of command is a decision, not an accident.
 */
const ALLOWED: Array<{ words: string[]; why: string }> = [
  { words: ['npm', 'link'], why: "npm's own command; puts the package's bin on PATH (it changes the global prefix)" },
  { words: ['npm', 'test'], why: 'checked below: package.json has a test script' },
  { words: ['export'], why: 'the shell setting variables; each argument is checked to be NAME=value' },
  { words: ['git', 'diff'], why: "git's own command, used as input for a pipe" },
  {
    words: ['systemctl', 'enable', '--now', 'durable-agent-worker'],
    why: 'needs a running systemd; the unit itself is checked by test/deploy-manifests.test.ts',
  },
  {
    words: ['journalctl', '-u', 'durable-agent-worker'],
    why: 'needs a running systemd; reads the unit deploy/systemd/ installs',
  },
  {
    words: ['kubectl', 'create', 'secret', 'generic', 'durable-agent-worker-secrets'],
    why: 'needs a cluster; the name is the one deploy/kubernetes/worker.yaml refers to',
  },
  {
    words: ['kubectl', 'apply', '-f', 'deploy/kubernetes/worker.yaml'],
    why: 'needs a cluster; test/deploy-manifests.test.ts decodes the file strictly into the API types',
  },
  {
    words: ['docker', 'compose', 'up'],
    why: 'Docker is not on the CI machines; docker-compose.yml is checked to exist',
  },
];

const packageJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

function fileProblem(file: string | undefined): string | undefined {
  if (file === undefined) return 'no file named';
  return fs.existsSync(path.join(root, file)) ? undefined : `${file} does not exist in the checkout`;
}

// ---------------------------------------------------------------------------------------------
// temporal: the pinned CLI's own help says whether the subcommand exists and which flags it takes.

let temporalBinary: string | undefined;
let temporalGlobalFlags: string | undefined;

function temporal(args: string[]): { status: number | null; output: string } {
  temporalBinary ??= findTemporalBinary(root);
  const run = spawnSync(temporalBinary, args, { encoding: 'utf8', timeout: 20_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The flags that take a value, from help text: a flag, one space, then its value's type. */
function valueFlags(help: string): Set<string> {
  const flags = new Set<string>();
  for (const match of help.matchAll(/(?:^|\s)(?:-\w, )?--([\w-]+)(?:, -\w)? (?! )\S+/gm)) flags.add(match[1] as string);
  return flags;
}

/**
 * Why the temporal CLI would refuse `args`: `--help` makes it parse every flag (an unknown one
 * fails) and print the usage of the subcommand it found, which must be the whole subcommand
 * written; a word after the flags that no flag takes is refused, since the CLI may ignore it.
 */
function temporalProblem(args: string[]): string | undefined {
  const firstFlag = args.findIndex((word) => word.startsWith('-'));
  const subcommand = firstFlag === -1 ? args : args.slice(0, firstFlag);
  const help = temporal([...args, '--help']);
  if (help.status !== 0)
    return help.output.split('\n').find((line) => /error/i.test(line)) ?? 'the Temporal CLI refused it';
  if (!help.output.split('\n').some((line) => line.trim().startsWith(`temporal ${subcommand.join(' ')} [`))) {
    return `the Temporal CLI has no command "temporal ${subcommand.join(' ')}"`;
  }
  temporalGlobalFlags ??= temporal(['options']).output;
  const takesValue = valueFlags(`${help.output}\n${temporalGlobalFlags}`);
  const rest = args.slice(subcommand.length);
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    if (!word.startsWith('-')) return `"${word}" is not a flag's value: the Temporal CLI would ignore it`;
    const name = word.replace(/^-+/, '').split('=')[0] as string;
    if (!word.includes('=') && takesValue.has(name)) i++;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------

function commandProblem(command: DocCommand): string | undefined {
  const [program, ...args] = command.words;
  if (program === 'durable-agent') return argvProblem(args);
  if (program === 'node' && args[0] === 'bin/durable-agent.js') return argvProblem(args.slice(1));
  if (program === 'temporal') return temporalProblem(args);
  if (program === 'npm' && args[0] === 'run') {
    return args[1] && packageJson.scripts[args[1]] ? undefined : `package.json has no script "${args[1]}"`;
  }
  if (program === 'npm' && args[0] === 'test' && !packageJson.scripts.test) return 'package.json has no test script';
  if (program === 'npx' && args[0] === 'jest') {
    const files = args.slice(1).filter((word) => !word.startsWith('-'));
    return files.length === 0 ? undefined : files.map(fileProblem).find(Boolean);
  }
  if (program === 'node' || program === 'bash') return fileProblem(args[0]);
  if (program === 'export') {
    const bad = args.find((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
    return bad === undefined ? undefined : `export ${bad}: not NAME=value`;
  }
  if (program === 'docker') return fileProblem('docker-compose.yml') ?? allowListProblem(command.words);
  return allowListProblem(command.words);
}

function allowListProblem(words: string[]): string | undefined {
  const allowed = ALLOWED.some((entry) => entry.words.every((word, i) => words[i] === word));
  return allowed
    ? undefined
    : `no check for "${words.slice(0, 2).join(' ')}": check it, or allow it in ALLOWED with why`;
}

function allCommands(): DocCommand[] {
  return docPages().flatMap((page) => fencedBlocks(page).flatMap(blockCommands));
}

describe('the doc check', () => {
  test('finds the commands it is meant to check', () => {
    // A parser that found nothing would pass everything.
    const commands = allCommands();
    expect(commands.length).toBeGreaterThan(60);
    const programs = new Set(commands.map((command) => command.words[0]));
    for (const program of ['durable-agent', 'npm', 'temporal', 'node', 'bash', 'npx'])
      expect(programs).toContain(program);
    expect(splitCommandLine(`A=1 durable-agent run "a b" --cwd . > out.json 2>&1 | head -1 # note`)).toEqual([
      ['A=1', 'durable-agent', 'run', 'a b', '--cwd', '.'],
      ['head', '-1'],
    ]);
    expect(splitCommandLine(`durable-agent status <id> --json`)).toEqual([
      ['durable-agent', 'status', '<id>', '--json'],
    ]);
  });

  test('every fenced block says what it holds, and data blocks hold no command', () => {
    const problems: string[] = [];
    for (const page of docPages()) {
      for (const block of fencedBlocks(page)) {
        const where = `${page}:${block.line}`;
        if (!COMMAND_LANGUAGES.has(block.language) && !DATA_LANGUAGES.has(block.language)) {
          problems.push(
            `${where}: fenced block tagged "${block.language}"; use sh or console (commands), json, jsonl or text`,
          );
        }
        if (block.language === 'text' && block.lines.some((line) => /^(\$ |durable-agent )/.test(line.trim()))) {
          problems.push(`${where}: a text block holds a command; put it in an sh or console block`);
        }
        if (block.language === 'json') {
          try {
            JSON.parse(block.lines.join('\n'));
          } catch (error) {
            problems.push(`${where}: not JSON: ${(error as Error).message}`);
          }
        }
        if (block.language === 'jsonl') {
          for (const line of block.lines.filter((l) => l.trim())) {
            try {
              JSON.parse(line);
            } catch (error) {
              problems.push(`${where}: a line is not JSON: ${(error as Error).message}`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('every command in the README and docs parses as written', () => {
    const problems = allCommands().flatMap((command) => {
      const problem = commandProblem(command);
      return problem ? [`${command.where}: ${command.text}\n    ${problem.split('\n')[0]}`] : [];
    });
    expect(problems).toEqual([]);
  }, 60_000);

  test('every relative link and #anchor resolves', () => {
    const problems: string[] = [];
    for (const page of docPages()) {
      for (const { line, target } of pageLinks(readPage(page))) {
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const resolved = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
        const where = `${page}:${line}: ${target}`;
        if (!fs.existsSync(path.join(root, resolved))) {
          problems.push(`${where}: ${resolved} does not exist`);
          continue;
        }
        if (anchor !== undefined && !pageAnchors(readPage(resolved)).has(anchor)) {
          problems.push(`${where}: ${resolved} has no heading #${anchor}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('the CLI reference names every command and every flag', () => {
    const reference = readPage('docs/cli.md');
    // Each command has a heading of its own (`### status, ls, tail, result`); a batch subcommand
    // is written out (`batch status <id>`).
    const headed = new Set(
      [...reference.matchAll(/^### (.*)$/gm)].flatMap((match) => (match[1] as string).split(',').map((n) => n.trim())),
    );
    const missing: string[] = [];
    const visit = (command: Command, names: string[]) => {
      for (const sub of command.commands) {
        const words = sub.name() === 'run' && names[0] === 'batch' ? names : [...names, sub.name()];
        const named = words.length === 1 ? headed.has(words[0] as string) : reference.includes(`\`${words.join(' ')} `);
        if (!named) missing.push(`command ${words.join(' ')}`);
        for (const option of sub.options) {
          if (option.long && !reference.includes(option.long)) missing.push(`${words.join(' ')} ${option.long}`);
        }
        visit(sub, words);
      }
    };
    visit(buildProgram(), []);
    expect(missing).toEqual([]);
  });

  test('the README is a front door: at most 200 lines, and no page has giant lines', () => {
    expect(readPage('README.md').split('\n').length).toBeLessThanOrEqual(200);
    const problems: string[] = [];
    for (const page of docPages()) {
      const lines = readPage(page).split('\n');
      let inFence = false;
      lines.forEach((line, index) => {
        if (/^\s*```/.test(line)) inFence = !inFence;
        if (!inFence && line.length > 120) problems.push(`${page}:${index + 1}: ${line.length} characters`);
      });
    }
    expect(problems).toEqual([]);
  });
});
