/**
 * What opening a workspace file from a handle on the workspace costs (`openWorkspaceFile`: one
 * open per path component below the workspace's handle, symlinks read and walked) against the way
 * the file tools opened files before: resolve the path by name, check it is inside, then open it by
 * name again (`resolveWorkspacePath` and `open`). Each way opens, stats and reads the same file, at
 * three depths, `FILE_OPEN_CALLS` (default 2000) times, alternating, in one run; then a Write's file
 * work both ways (a tenth as many: each fsyncs), and a whole Read call, for scale.
 *
 *   npx ts-node -T bench/file-open.ts
 */
import fs from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runRead } from '../src/activities/tools/read';
import type { ToolContext } from '../src/activities/tools/tool-context';
import { openWorkspaceFile } from '../src/activities/tools/workspace-open';
import { resolveWorkspacePath } from '../src/activities/tools/workspace-path';
import { openWriteTarget, writeInFolder } from '../src/activities/tools/workspace-write';
import { writeFileDurably } from '../src/activities/store/durable-file';
import { median } from './median';

const CALLS = Number(process.env.FILE_OPEN_CALLS ?? 2000);
const CONTENT = 'export const answer = 42;\n'.repeat(40);

async function byName(workspace: string, input: string): Promise<void> {
  const target = await resolveWorkspacePath(workspace, input);
  if (!target.ok) throw new Error(target.error);
  const handle = await open(target.absolute, 'r');
  try {
    await handle.stat();
    await handle.read(Buffer.alloc(4096), 0, 4096, 0);
  } finally {
    await handle.close();
  }
}

async function fromHandle(workspace: string, input: string): Promise<void> {
  const target = await openWorkspaceFile(workspace, input);
  if (!target.ok) throw new Error(target.error);
  try {
    await target.handle.stat();
    await target.handle.read(Buffer.alloc(4096), 0, 4096, 0);
  } finally {
    await target.handle.close();
  }
}

/** A Write's file work before: check the path, then write-file-atomic by name and fsync the folder. */
async function writeByName(workspace: string, input: string): Promise<void> {
  const target = await resolveWorkspacePath(workspace, input);
  if (!target.ok) throw new Error(target.error);
  await writeFileDurably(target.absolute, CONTENT);
}

/** The same now: the folder opened from the workspace's handle, the file replaced through it. */
async function writeFromHandle(workspace: string, input: string): Promise<void> {
  const target = await openWriteTarget(workspace, input, { createFolders: false });
  if (!target.ok) throw new Error(target.error);
  try {
    await writeInFolder(target.folder, target.name, CONTENT, await target.existing?.stat());
  } finally {
    await target.close();
  }
}

async function timed(run: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-open-'));
  const files = ['README.md', 'src/tools/index.ts', 'packages/core/src/a/b/c/d/deep.ts'];
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
    fs.writeFileSync(path.join(workspace, file), CONTENT);
  }
  const ctx: ToolContext = {
    workspace,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    readState: {},
    readDenyRules: [],
  };
  console.log(
    `file-open: ${CALLS} opens (open, fstat, read 4 KiB, close) per way and depth, alternating; node ${process.version}, ${os.cpus().length} cpus`,
  );
  console.log('depth  by name (check, then open)  from the workspace handle  ratio');
  try {
    for (const file of files) {
      const times = { name: [] as number[], handle: [] as number[] };
      for (let i = 0; i < CALLS; i++) {
        times.name.push(await timed(() => byName(workspace, file)));
        times.handle.push(await timed(() => fromHandle(workspace, file)));
      }
      const [name, handle] = [median(times.name), median(times.handle)];
      console.log(
        `${String(file.split('/').length).padStart(5)}  ${`${(name * 1000).toFixed(0)} µs`.padStart(26)}  ${`${(handle * 1000).toFixed(0)} µs`.padStart(25)}  ${(handle / name).toFixed(2).padStart(5)}`,
      );
    }
    const writes = { name: [] as number[], handle: [] as number[] };
    for (let i = 0; i < CALLS / 10; i++) {
      writes.name.push(await timed(() => writeByName(workspace, files[1]!)));
      writes.handle.push(await timed(() => writeFromHandle(workspace, files[1]!)));
    }
    const [name, handle] = [median(writes.name), median(writes.handle)];
    console.log(
      `a Write's file work (depth 3, fsynced), ${CALLS / 10} each: by name ${(name * 1000).toFixed(0)} µs, from the handle ${(handle * 1000).toFixed(0)} µs, ratio ${(handle / name).toFixed(2)}`,
    );
    const reads: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      reads.push(
        await timed(async () => {
          const outcome = await runRead({ file_path: files[1]! }, ctx);
          if (outcome.isError) throw new Error(JSON.stringify(outcome.content));
        }),
      );
    }
    console.log(`a whole Read call (depth 3, 40 lines): median ${(median(reads) * 1000).toFixed(0)} µs`);
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

void main();
