/**
 * The scripted jobs of the context benches: workspaces of distinct files, and replies that each
 * make one tool call with distinct ids (so no reply equals another, as in a real session).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedBlock, ScriptedReply } from '../src/model-server';
import { tempDir } from './scenario';

/** A workspace (a fresh temp dir, removed with the bench's others) holding `files`. */
export function workspaceWith(files: Record<string, string>): string {
  const dir = tempDir('ws');
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/**
 * `count` text files of about `bytes` bytes each, under `dir`, every line unique (file and line
 * number), so no two files, and no two reads of different files, have the same content.
 */
export function textFiles(dir: string, count: number, bytes: number, lineChars = 100): Record<string, string> {
  const files: Record<string, string> = {};
  const filler = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore ';
  for (let n = 0; n < count; n++) {
    const lines: string[] = [];
    for (let line = 1; lines.length * lineChars < bytes; line++) {
      const head = `${dir} file ${n} line ${String(line).padStart(5, '0')}: `;
      lines.push((head + filler.repeat(Math.ceil(lineChars / filler.length))).slice(0, lineChars - 1));
    }
    files[filePath(dir, n)] = `${lines.join('\n')}\n`;
  }
  return files;
}

export function filePath(dir: string, n: number): string {
  return `${dir}/file-${String(n).padStart(3, '0')}.txt`;
}

export function toolUse(id: string, name: string, input: Record<string, unknown>): ScriptedBlock {
  return { type: 'tool_use', id, name, input };
}

export function readCall(id: string, file: string): ScriptedBlock {
  return toolUse(id, 'Read', { file_path: file });
}

/**
 * A Bash call that prints about `bytes` bytes, every line naming `tag` so its output is its own.
 * `seq -f` writes the lines; it runs in the worker's sandbox like any command.
 */
export function printingBash(id: string, tag: string, bytes: number): ScriptedBlock {
  const line = `${tag} line %05g: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor`;
  // `%05g` prints five digits where the directive has four characters; and each line ends with a newline.
  const lineBytes = line.length + 2;
  const lines = Math.max(1, Math.round(bytes / lineBytes));
  return toolUse(id, 'Bash', { command: `seq -f '${line}' 1 ${lines}`, description: `Print ${lines} lines` });
}

export function textReply(text: string): ScriptedReply {
  return { content: [{ type: 'text', text }] };
}

/** `chars` characters of the model "thinking out loud" before a call: text microcompact never clears. */
export function narration(turn: number, chars: number): string {
  const sentence = `Step ${turn}: I keep a careful account of what I found so far and of what comes next. `;
  return `${sentence.repeat(Math.max(1, Math.ceil(chars / sentence.length)))}`.slice(0, chars);
}
