import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import type { SessionInput } from '../src/shared/session';

/**
 * The benchmark job, shared by every variant: `TURNS` turns; on each of turns 1..TURNS-1 the model
 * asks for one cheap tool call (a `Read` of a ten-line file), and the last turn answers with text.
 */
export const TURNS = 100;
export const MODEL = 'claude-sonnet-5-5';
export const FINAL_TEXT = 'Done: read the notes file on every turn.';

/**
 * `runTag` makes every run's content its own (tool ids, prompt), as distinct jobs are: a
 * long-lived store or worker then never serves one run from content another run wrote.
 */
export function benchScript(turns: number, runTag: string): ScriptedSession {
  const replies: ScriptedSession['replies'] = [];
  for (let i = 0; i < turns - 1; i++) {
    replies.push({
      content: [
        { type: 'text', text: `Reading the notes, pass ${i + 1}.` },
        {
          type: 'tool_use',
          id: `toolu_${runTag}_${String(i).padStart(3, '0')}`,
          name: 'Read',
          input: { file_path: 'notes.txt' },
        },
      ],
    });
  }
  replies.push({ content: [{ type: 'text', text: FINAL_TEXT }] });
  return { name: `bench-${runTag}`, replies, chunkDelayMs: 0 };
}

export const WORKSPACE_FILES: Record<string, string> = {
  'notes.txt': Array.from({ length: 10 }, (_, i) => `line ${i + 1}: nothing to see here`).join('\n') + '\n',
};

export function sessionInputFor(workspace: string, runTag: string): SessionInput {
  // Production timeouts (the defaults): they do not change the cost of a run in which nothing fails.
  return { prompt: `Job ${runTag}: read notes.txt again and again, then say you are done.`, workspace, model: MODEL };
}

/** Temp directories made by the bench, removed by `removeTempDirs()`. */
const tempDirs: string[] = [];

export function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `durable-agent-bench-${prefix}-`)));
  tempDirs.push(dir);
  return dir;
}

export function makeWorkspace(): string {
  const dir = tempDir('ws');
  for (const [name, content] of Object.entries(WORKSPACE_FILES)) fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
