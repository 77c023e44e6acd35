/**
 * The chaos harness's scripted jobs: what the model says at each turn (Bash side effects that
 * append unique lines, Edits, MultiEdits, Writes, parallel Reads, slow streams, in three shapes),
 * the workspace each starts from and what it must leave; and how a request names its job.
 */
import type { ScriptedBlock, ScriptedReply, ScriptedSession } from '../../../src/model-server';

export const CHAOS_MODEL = 'claude-sonnet-5-5';

/** One scripted job: what the model says at each turn, the workspace it starts from, what it must leave. */
export interface ChaosJob {
  key: string;
  prompt: string;
  files: Record<string, string>;
  session: ScriptedSession;
  /** Lines its Bash calls append to `effects.log`: each must be there exactly once at the end. */
  effects: string[];
  /** Lines its Edits, MultiEdits and Writes add (file → line): each must be there exactly once. */
  edits: Array<{ file: string; line: string }>;
}

const FILES: Record<string, string> = {
  'notes.md': '# Notes\n\nThe service answers one question.\nKeep the answer stable.\n',
  'config.yml': 'name: chaos\nversion: 1\nowner: nobody\n',
  'src/app.ts': 'export const answer = 42;\nexport function ask(): number {\n  return answer;\n}\n',
};

/** Deterministic filler so each reply streams for a while (64 characters per SSE chunk). */
function prose(key: string, turn: number, chars: number): string {
  const sentence = `Job ${key}, turn ${turn}: looking at the workspace step by step before the next call. `;
  return sentence
    .repeat(Math.ceil(chars / sentence.length))
    .slice(0, chars)
    .trimEnd();
}

/** Tool-call builders whose ids are unique within the job and the same in every run of it. */
function toolCalls(key: string) {
  let count = 0;
  const call = (name: string, input: Record<string, unknown>): ScriptedBlock => ({
    type: 'tool_use',
    id: `toolu_${key}_${++count}_${name.toLowerCase()}`,
    name,
    input,
  });
  return {
    call,
    bash: (command: string) => call('Bash', { command }),
    read: (file: string) => call('Read', { file_path: file }),
    edit: (file: string, from: string, to: string) =>
      call('Edit', { file_path: file, old_string: from, new_string: to }),
  };
}

/**
 * `count` jobs in three shapes, taking turns. Each reads first, then does `rounds` rounds of side
 * effects and edits, then answers. `tag` goes into every side-effect line and command, so the
 * lines are unique to this run and its Bash processes can be found by command line.
 */
export function chaosJobs(count: number, tag: string, rounds = 1): ChaosJob[] {
  return Array.from({ length: count }, (_, i) => {
    const key = `job${i + 1}`;
    const { call, bash, read, edit } = toolCalls(key);
    const effects: string[] = [];
    const edits: ChaosJob['edits'] = [];
    /** A side effect: the command that appends a new unique line. */
    const append = (round: number, n: number) => {
      const line = `${tag}-${key}-${round}-${n}`;
      effects.push(line);
      return `echo ${line} >> effects.log`;
    };
    /** A line an edit adds, remembered so it can be counted at the end. */
    const added = (file: string, line: string) => {
      edits.push({ file, line });
      return line;
    };
    const steps: ScriptedBlock[][] = [];
    const shape = i % 3;
    if (shape === 0) {
      // Edits between side effects; parallel reads.
      steps.push([read('notes.md'), read('config.yml'), read('src/app.ts')]);
      for (let r = 1; r <= rounds; r++) {
        steps.push(
          [bash(append(r, 1))],
          [edit('config.yml', 'version: 1', `version: 1\n${added('config.yml', `edited_by: ${key} r${r}`)}`)],
          [bash(`sleep 3; ${append(r, 2)}`)],
          [
            edit(
              'src/app.ts',
              'export const answer = 42;',
              `export const answer = 42;\n${added('src/app.ts', `export const reviewedBy${r} = '${key}';`)}`,
            ),
          ],
          [bash('cat effects.log'), read('config.yml')],
        );
      }
    } else if (shape === 1) {
      // Bash that writes, sleeps and writes again; Writes; a read-only Bash that sleeps.
      steps.push([read('notes.md'), call('Grep', { pattern: 'answer', path: 'src/app.ts', output_mode: 'content' })]);
      for (let r = 1; r <= rounds; r++) {
        const report = `report-${r}.md`;
        steps.push(
          [bash(`${append(r, 1)}; sleep 2; ${append(r, 2)}`)],
          [call('Write', { file_path: report, content: `# Report\n\n${added(report, `report ${r} of ${key}`)}\n` })],
          [bash(`sleep 4; ${append(r, 3)}`)],
          [bash(`sleep 1; cat effects.log ${report}`)],
        );
      }
    } else {
      // A MultiEdit and an Edit around a slow side effect; three reads in parallel.
      steps.push([read('config.yml'), read('src/app.ts')]);
      for (let r = 1; r <= rounds; r++) {
        steps.push(
          [
            call('MultiEdit', {
              file_path: 'src/app.ts',
              edits: [
                {
                  old_string: 'export const answer = 42;',
                  new_string: `${added('src/app.ts', `// checked by ${key} r${r}`)}\nexport const answer = 42;`,
                },
                {
                  old_string: '  return answer;\n}',
                  new_string: `  return answer;\n}\n${added('src/app.ts', `export const owner${r} = '${key}';`)}`,
                },
              ],
            }),
          ],
          [bash(`sleep 2; ${append(r, 1)}`)],
          [edit('config.yml', 'owner: nobody', `owner: nobody\n${added('config.yml', `checked: ${key} r${r}`)}`)],
          [read('config.yml'), read('src/app.ts'), read('effects.log')],
        );
      }
    }
    const replies: ScriptedReply[] = [
      ...steps.map((blocks, t) => ({ content: [{ type: 'text' as const, text: prose(key, t, 250) }, ...blocks] })),
      { content: [{ type: 'text', text: prose(key, steps.length, 900) }] },
    ];
    const session: ScriptedSession = {
      name: `chaos-${key}`,
      replies,
      // Every reply streams for one to two seconds, the first and last for longer: many kills land in a stream.
      chunkDelayMs: 100,
      slowTurns: { 0: 200, [replies.length - 1]: 200 },
    };
    return {
      key,
      prompt: `[chaos:${key}] Review this workspace and log progress to effects.log.`,
      files: FILES,
      session,
      effects,
      edits,
    };
  });
}

/** The job key a request's first user message names (`[chaos:<key>]`). */
export function jobKeyOf(body: unknown): string | undefined {
  const messages = (body as { messages?: unknown[] } | undefined)?.messages;
  return /\[chaos:([a-z0-9-]+)\]/.exec(JSON.stringify(messages?.[0] ?? ''))?.[1];
}
