/**
 * A long scripted session (100 turns; `LONG_SESSION_TURNS=300` for the size it was first accepted
 * at, see bench/README.md) that crosses continue-as-new and autocompact several times, its worker SIGKILLed twice along the way (once while a model reply
 * streams, once while a compaction is in flight), ends with the same Terminal, the same
 * transcript (to the content address) and the same workspace as an uninterrupted run, and no
 * side effect ran twice. And a smaller one: autocompact that keeps failing turns itself off.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { FileContentStore } from '../src/activities/store/content-store';
import type { JournalEntry } from '../src/activities/tool-journal';
import { classifyToolUse } from '../src/shared/tool-definition';
import { getToolDefinition } from '../src/shared/tools';
import { WORKSPACE_DATA_DIR } from '../src/activities/tools/workspace-data';
import type { Message } from '../src/shared/messages';
import type { SessionInput, SessionSnapshot } from '../src/shared/session';
import type { Terminal } from '../src/shared/terminal';
import type { ContentRef } from '../src/shared/transcript';
import { TranscriptStore } from '../src/activities/store/transcript-store';
import type { ScheduledCompactionFault, ScriptedReply, ScriptedSession } from '../src/model-server';
import {
  ScriptedModelServer,
  TEST_TIMEOUTS,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import type { WorkerProcess } from './support/harness';
import { editCall, readCall, scriptedJobSuite, snapshot, textReply, toolUse, terminalOf } from './support/jobs';

const MODEL = 'claude-sonnet-5-5';
/** A small window, so the job compacts every few dozen turns (autocompact at 40k − 8k − 13k = 19k). */
const WINDOW = 40_000;
const MODEL_LIMITS: SessionInput['modelLimits'] = [{ prefix: MODEL, contextWindow: WINDOW, maxOutputTokens: 8_000 }];

/**
 * 100 turns cross continue-as-new five times or so and autocompact four times, which is all the
 * assertions need; the full 300 take three times as long.
 */
const TURNS = Number(process.env.LONG_SESSION_TURNS ?? 100);
if (!Number.isInteger(TURNS) || TURNS < 100 || TURNS % 10 !== 0) {
  throw new Error(`LONG_SESSION_TURNS must be a multiple of 10, at least 100 (whole cycles); got ${TURNS}`);
}
/** Ten turns a cycle (`toolTurn`). */
const CYCLES = Math.ceil((TURNS - 1) / 10);
const SOURCE_FILES = 20;
const FINAL_TEXT = `All ${TURNS - 1} steps are done: every source file was read, edited where asked, and the notes are written.`;

const sourcePath = (n: number) => `src/file-${String(n).padStart(2, '0')}.txt`;
/** Line 7 of source file `n`, which the Edits change; still unique in the file after each edit appends to it. */
const marker = (n: number) => `marker-${String(n).padStart(2, '0')}-07`;

/** Twenty source files of about 3 KB, each line unique. */
function sourceFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let n = 0; n < SOURCE_FILES; n++) {
    const lines = Array.from({ length: 40 }, (_, line) =>
      line === 7
        ? `${marker(n)}: the line the edits change`
        : `file ${n} line ${String(line).padStart(2, '0')}: ${'lorem ipsum dolor sit amet '.repeat(2).trim()}`,
    );
    files[sourcePath(n)] = `${lines.join('\n')}\n`;
  }
  return files;
}

/** What the model "says" before each call: about 1 KB of text, which microcompact never clears. */
function narration(turn: number): string {
  const sentence = `Step ${turn}: I keep a careful account of what I found so far and what comes next. `;
  return `${sentence.repeat(12)}Now the tool call for step ${turn}.`;
}

/**
 * Ten-turn cycles: five Reads, an Edit of the file just read, a Bash that appends its call id to
 * calls.log (the side effect that must run once per call), a Write of a note, a Bash that counts
 * the log, a Read of the note. The last turn is the final answer.
 */
function toolTurn(turn: number): ScriptedReply {
  const cycle = Math.floor(turn / 10);
  const step = turn % 10;
  const id = `toolu_${String(turn).padStart(3, '0')}`;
  const file = (k: number) => sourcePath((5 * cycle + k) % SOURCE_FILES);
  const call =
    step < 5
      ? readCall(id, file(step))
      : step === 5
        ? editCall(
            id,
            file(4),
            marker((5 * cycle + 4) % SOURCE_FILES),
            `${marker((5 * cycle + 4) % SOURCE_FILES)} (edited in cycle ${cycle})`,
          )
        : step === 6
          ? toolUse(id, 'Bash', { command: `echo ${id} >> calls.log` })
          : step === 7
            ? toolUse(id, 'Write', {
                file_path: `notes/cycle-${cycle}.md`,
                content: `# Cycle ${cycle}\n\nRead ${[0, 1, 2, 3, 4].map(file).join(', ')}; edited ${file(4)}.\n`,
              })
            : step === 8
              ? toolUse(id, 'Bash', { command: 'wc -l < calls.log' })
              : readCall(id, `notes/cycle-${cycle}.md`);
  return { content: [{ type: 'text', text: narration(turn) }, call] };
}

function script(extra: Partial<ScriptedSession> = {}): ScriptedSession {
  const replies = Array.from({ length: TURNS - 1 }, (_, turn) => toolTurn(turn));
  return { name: 'long-session', contextWindow: WINDOW, replies: [...replies, textReply(FINAL_TEXT)], ...extra };
}

const bashCallIds = Array.from({ length: TURNS - 1 }, (_, turn) => turn)
  .filter((turn) => turn % 10 === 6)
  .map((turn) => `toolu_${String(turn).padStart(3, '0')}`);

// ---------------------------------------------------------------------------------------------
// What a run leaves behind

/** One transcript chain as stored, oldest message first, and the chain it replaced (if any). */
interface Chain {
  messages: Message[];
  compactedFrom: ContentRef | null;
}

interface StoredSegment {
  prev: ContentRef | null;
  messages: Message[];
  compactedFrom?: ContentRef | null;
}

/**
 * Every chain of a job's transcript, newest first: the one `head` names, then, following each
 * first segment's `compactedFrom`, the chains that compactions replaced.
 */
async function chainsOf(store: FileContentStore, head: ContentRef | null): Promise<Chain[]> {
  const chains: Chain[] = [];
  for (let chainHead = head; chainHead !== null;) {
    const segments: StoredSegment[] = [];
    for (let ref: ContentRef | null = chainHead; ref !== null;) {
      const segment: StoredSegment = await store.get<StoredSegment>(ref);
      segments.push(segment);
      ref = segment.prev;
    }
    segments.reverse();
    const compactedFrom = segments[0]?.compactedFrom ?? null;
    chains.push({ messages: segments.flatMap((s) => s.messages), compactedFrom });
    chainHead = compactedFrom;
  }
  return chains;
}

type Block = Record<string, unknown>;
const blocksOf = (message: Message): Block[] =>
  typeof message.content === 'string'
    ? [{ type: 'text', text: message.content }]
    : (message.content as unknown as Block[]);

/** The tool_use ids of a chain, in order. */
const toolUseIds = (messages: Message[]) =>
  messages.flatMap((m) =>
    blocksOf(m)
      .filter((b) => b.type === 'tool_use')
      .map((b) => b.id as string),
  );

/** Every tool_result of a chain, by tool_use id (a later chain may repeat a kept one). */
const toolResults = (messages: Message[]) =>
  messages.flatMap((m) =>
    blocksOf(m)
      .filter((b) => b.type === 'tool_result')
      .map((b) => ({ id: b.tool_use_id as string, content: b.content, isError: b.is_error === true })),
  );

/** Every file under `dir`, by relative path. */
function filesUnder(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = path.join(prefix, entry.name);
    if (entry.isDirectory()) Object.assign(files, filesUnder(dir, rel));
    else files[rel] = fs.readFileSync(path.join(dir, rel), 'utf8');
  }
  return files;
}

/** The run ids of a job, in order, following continue-as-new from the first. */
async function runIdsOf(
  env: TestWorkflowEnvironment,
  handle: WorkflowHandleWithFirstExecutionRunId,
): Promise<string[]> {
  const runIds: string[] = [];
  for (let runId: string | undefined = handle.firstExecutionRunId; runId;) {
    runIds.push(runId);
    const history = await env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runIds;
}

const headOf = (r: { terminal: Terminal }) => ({
  head: r.terminal.transcriptHead,
  messageCount: r.terminal.messageCount,
});

interface RunResult {
  terminal: Terminal;
  /** The transcript store on the run's worker home. */
  transcripts: TranscriptStore;
  /** How many runs continue-as-new made of the job. */
  runs: number;
  chains: Chain[];
  files: Record<string, string>;
  /** The tool journal's entries, in the worker's data directory. */
  journal: Record<string, string>;
  server: ScriptedModelServer;
  seconds: number;
  /** What each SIGKILL interrupted, and in which run (0-based) of the job. */
  kills: Array<{ what: string; atSeconds: number; run: number }>;
}

describe(`a ${TURNS}-turn session across continue-as-new and autocompact, its worker SIGKILLed twice`, () => {
  let env: TestWorkflowEnvironment;
  /**
   * Both runs use this workspace path in turn, so their system prompts (which name it) and with
   * them their requests are the same; the transcript itself holds only relative paths.
   */
  let base: string;
  let workspace: string;
  /** Worker homes (content store), removed at the end. */
  const homes: string[] = [];

  beforeAll(async () => {
    // About 12 history events per turn: Temporal suggests continue-as-new every 15-odd turns (every
    // 30-odd at 300 turns and more, as the test was first accepted).
    const suggestAt = TURNS >= 300 ? 400 : 200;
    env = await startTemporal(['--dynamic-config-value', `limit.historyCount.suggestContinueAsNew=${suggestAt}`]);
    base = fs.realpathSync(tempDir('long'));
    workspace = path.join(base, 'ws');
  });
  afterAll(async () => {
    await env?.teardown();
    for (const dir of [base, ...homes]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function freshWorkspace(): void {
    fs.rmSync(workspace, { recursive: true, force: true });
    for (const [name, content] of Object.entries(sourceFiles())) {
      fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
      fs.writeFileSync(path.join(workspace, name), content);
    }
  }

  /**
   * Run the job on a worker process; `interrupt` may kill it (it gets the running handle and a
   * way to replace the worker) before the job ends.
   */
  async function run(
    name: string,
    session: ScriptedSession,
    interrupt?: (on: {
      server: ScriptedModelServer;
      handle: WorkflowHandle;
      /** SIGKILL the worker and start a new one; resolves with the time of the kill. */
      restart: (what: string) => Promise<number>;
    }) => Promise<void>,
  ): Promise<RunResult> {
    const started = Date.now();
    freshWorkspace();
    const server = await ScriptedModelServer.start(session);
    const taskQueue = uniqueTaskQueue(name);
    const home = tempDir('home');
    homes.push(home);
    const spawn = () => spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
    let worker: WorkerProcess | undefined;
    const kills: Array<{ what: string; atSeconds: number; runId: string }> = [];
    try {
      worker = await spawn();
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `${name}-${process.pid}-${Date.now()}`,
        args: [sessionInput(workspace, { modelLimits: MODEL_LIMITS, maxTurns: TURNS + 10 })],
      });
      if (interrupt) {
        await interrupt({
          server,
          handle,
          restart: async (what) => {
            await worker?.kill('SIGKILL');
            const killedAt = Date.now();
            const { runId } = await handle.describe();
            kills.push({ what, atSeconds: (killedAt - started) / 1000, runId });
            worker = await spawn();
            return killedAt;
          },
        });
      }
      const terminal = await terminalOf(handle);
      const store = new FileContentStore(path.join(home, 'store'));
      const chains = await chainsOf(store, terminal.transcriptHead);
      const runIds = await runIdsOf(env, handle);
      return {
        terminal,
        transcripts: new TranscriptStore(store),
        runs: runIds.length,
        chains,
        files: filesUnder(workspace),
        journal: Object.fromEntries(
          Object.entries(filesUnder(path.join(home, 'store', 'workspaces'))).filter(([name]) =>
            name.includes(`${path.sep}journal${path.sep}`),
          ),
        ),
        server,
        seconds: (Date.now() - started) / 1000,
        kills: kills.map(({ runId, ...kill }) => ({ ...kill, run: runIds.indexOf(runId) })),
      };
    } finally {
      await worker?.kill('SIGTERM');
      await server.close();
    }
  }

  test('Terminal, transcript and workspace match an uninterrupted run; no side effect repeated', async () => {
    const a = await run('uninterrupted', script());
    const compactions = a.server.compactionRequests().map((r) => r.turn);
    console.log(
      `run A (uninterrupted): ${a.seconds.toFixed(1)}s, ${a.runs} runs, compactions before turns ${compactions.join(', ')}, ` +
        `transitions ${JSON.stringify(a.terminal.transitions)}`,
    );
    expect(a.terminal.reason).toBe('completed');
    expect(compactions.length).toBeGreaterThanOrEqual(4);

    // Kill points taken from run A: a model stream between the second and third compaction, and
    // a compaction two thirds of the way in (its first attempt hangs until the worker dies).
    const slowTurn = Math.floor(((compactions[1] ?? 0) + (compactions[2] ?? 0)) / 2);
    const hungCompaction = Math.floor((compactions.length * 2) / 3);
    const hang: ScheduledCompactionFault = { index: hungCompaction, attempt: 1, kind: 'hang' };
    // Seconds from each kill until the new worker's request reached the model server.
    const retries: number[] = [];
    const b = await run(
      'interrupted',
      script({ slowTurns: { [slowTurn]: 150 }, compactions: { faults: [hang] } }),
      async ({ server, restart }) => {
        await server.waitForStreamStarted(slowTurn, 150_000);
        let killedAt = await restart(`SIGKILL while turn ${slowTurn} streamed`);
        // The new worker asks again: the same turn, or the same compaction, next attempt.
        await server.waitForRequest(slowTurn, 2, 60_000);
        retries.push((Date.now() - killedAt) / 1000);
        await server.waitForCompaction(hungCompaction, 1, 150_000);
        killedAt = await restart(`SIGKILL during compaction ${hungCompaction}`);
        await server.waitForCompaction(hungCompaction, 2, 60_000);
        retries.push((Date.now() - killedAt) / 1000);
      },
    );
    const killed = b.kills.map(
      (k, i) =>
        `${k.what} at ${k.atSeconds.toFixed(1)}s, in run ${k.run}, asked again ${retries[i]?.toFixed(1)}s later`,
    );
    console.log(`run B (interrupted): ${b.seconds.toFixed(1)}s, ${b.runs} runs; ${killed.join('; ')}`);

    // The kills landed where meant: the slow turn and the hung compaction were each asked again.
    expect(b.server.requests.filter((r) => r.kind === 'turn' && r.turn === slowTurn).length).toBeGreaterThanOrEqual(2);
    expect(b.server.compactionRequests().filter((r) => r.compaction === hungCompaction).length).toBeGreaterThanOrEqual(
      2,
    );
    expect(b.kills).toHaveLength(2);
    // ... in two different runs of the job, neither of them the first.
    const [first, second] = b.kills.map((k) => k.run);
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first ?? 0);

    for (const r of [a, b]) {
      expect(r.terminal.reason).toBe('completed');
      expect(r.terminal.turnCount).toBe(TURNS);
      expect(r.terminal.finalText).toBe(FINAL_TEXT);
      expect(r.terminal.transitions?.autocompact).toBeGreaterThanOrEqual(2);
      expect(r.terminal.transitions?.next_turn).toBe(TURNS - 1);
      expect(r.runs).toBeGreaterThanOrEqual(2);
    }
    expect(b.terminal.transitions).toEqual(a.terminal.transitions);
    expect(b.terminal.context).toEqual(a.terminal.context);
    expect(b.terminal.messageCount).toBe(a.terminal.messageCount);
    // The same compactions on the same turns (besides the retry of the hung one), from the same
    // conversation: the last model request of both runs sent the same messages.
    expect(
      b.server
        .compactionRequests()
        .filter((r) => r.attempt === 1)
        .map((r) => r.turn),
    ).toEqual(compactions);
    expect(b.server.requests.at(-1)?.body.messages).toEqual(a.server.requests.at(-1)?.body.messages);
    // The runs need not split at the same turns (a kill delays the workflow tasks around it,
    // and the history gains the failed attempts), so only their number's lower bound is shared.

    // Usage is not compared as a whole: a retried model call is billed again by the API (here:
    // its prompt prefix comes from the cache the killed attempt wrote, so cached and uncached
    // input split differently). What the job counts is the usage of the attempts that completed,
    // the same requests and replies as in run A, so the totals are equal.
    const inputOf = (t: Terminal) =>
      t.usage.input_tokens + t.usage.cache_creation_input_tokens + t.usage.cache_read_input_tokens;
    expect(inputOf(b.terminal)).toBe(inputOf(a.terminal));
    expect(b.terminal.usage.output_tokens).toBe(a.terminal.usage.output_tokens);

    // The same transcript, to the content address: every chain, the compacted ones included.
    expect(b.terminal.transcriptHead).toBe(a.terminal.transcriptHead);
    expect(b.chains).toEqual(a.chains);
    // The chain the job would go on from is what TranscriptStore loads: the newest one.
    expect(await a.transcripts.load(headOf(a))).toEqual(a.chains[0]?.messages);
    expect(await b.transcripts.load(headOf(b))).toEqual(a.chains[0]?.messages);
    expect(a.chains).toHaveLength((a.terminal.transitions?.autocompact ?? 0) + 1);
    // Taken together, the chains hold every call once, in order, each with its result.
    const ids = [...new Set([...a.chains].reverse().flatMap((chain) => toolUseIds(chain.messages)))];
    expect(ids).toEqual(Array.from({ length: TURNS - 1 }, (_, turn) => `toolu_${String(turn).padStart(3, '0')}`));
    const results = new Map(a.chains.flatMap((chain) => toolResults(chain.messages)).map((r) => [r.id, r]));
    expect([...results.keys()].sort()).toEqual([...ids].sort());
    expect([...results.values()].filter((r) => r.isError)).toEqual([]);
    // The last chain starts with a summary and ends with the final answer.
    const last = a.chains[0]?.messages ?? [];
    expect(JSON.stringify(last[0]?.content)).toContain('continues an earlier conversation');
    expect(last.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: FINAL_TEXT }] });

    // No side effect ran twice: one line per Bash call that appends, in both runs.
    const expectedLog = bashCallIds.map((id) => `${id}\n`).join('');
    expect(a.files['calls.log']).toBe(expectedLog);
    expect(b.files['calls.log']).toBe(expectedLog);
    // The whole workspace is the same: the edits applied once each, the notes written. Its data
    // folder .durable-agent/ (copies of saved large results) is left out.
    const own = (files: Record<string, string>) =>
      Object.fromEntries(Object.entries(files).filter(([name]) => !name.startsWith(`${WORKSPACE_DATA_DIR}/`)));
    expect(own(b.files)).toEqual(own(a.files));
    expect(Object.keys(own(a.files))).toHaveLength(SOURCE_FILES + CYCLES + 1);
    // Read-only calls are not journaled; every other call is, in the data directory.
    const sideEffecting = a.chains
      .flatMap((chain) => chain.messages.flatMap(blocksOf))
      .filter((b) => b.type === 'tool_use' && !classifyToolUse(getToolDefinition(b.name as string), b.input).readOnly)
      .map((b) => b.id as string);
    for (const r of [a, b]) {
      // Every such call journalled once and completed: no attempt was left part-way.
      const entries = Object.entries(r.journal).map(([, text]) => JSON.parse(text) as JournalEntry);
      expect(entries.map((e) => e.toolUseId).sort()).toEqual([...new Set(sideEffecting)].sort());
      expect(entries.filter((e) => e.status !== 'completed')).toEqual([]);
    }
    // File 4 is edited in every fourth cycle, the newest edit next to the marker.
    const editCycles = Array.from({ length: CYCLES }, (_, cycle) => cycle).filter((cycle) => cycle % 4 === 0);
    expect(a.files[sourcePath(4)]).toContain(
      [marker(4), ...editCycles.reverse().map((cycle) => `(edited in cycle ${cycle})`)].join(' '),
    );
  }, 600_000);
});

// ---------------------------------------------------------------------------------------------
// Autocompact that keeps failing

/** A compaction that fails on every attempt the activity makes (it makes at most four). */
const failingCompaction = (index: number): ScheduledCompactionFault[] =>
  [1, 2, 3, 4, 5, 6].map((attempt) => ({
    index,
    attempt,
    kind: 'http',
    status: 500,
    errorType: 'api_error',
    message: `summary service down (compaction ${index})`,
  }));

/** Long enough to outgrow the window once autocompact is off; short enough to end before it fills again. */
const SHORT_TURNS = 60;
const SHORT_FINAL = 'Finished reading the short files.';

/** Each turn says about 3 KB and reads a short file: the context grows by some 800 tokens a turn. */
function shortScript(faults: ScheduledCompactionFault[]): ScriptedSession {
  const replies: ScriptedReply[] = Array.from({ length: SHORT_TURNS - 1 }, (_, turn) => ({
    content: [
      { type: 'text', text: narration(turn).repeat(3) },
      readCall(`toolu_short_${turn}`, `short-${turn % 5}.txt`),
    ],
  }));
  return {
    name: 'failing-compactions',
    contextWindow: WINDOW,
    replies: [...replies, textReply(SHORT_FINAL)],
    compactions: { faults },
  };
}

const shortFiles = Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`short-${i}.txt`, `short file ${i}\n`]));
const notices = (s: SessionSnapshot) => s.events.flatMap((e) => (e.kind === 'notice' ? [e.text] : []));

describe('autocompact that fails three times in a row', () => {
  // Read is all the script calls: offering only it keeps the context's arithmetic (which turns
  // compact) independent of how many tools, with what schemas, a job offers by default.
  const suite = scriptedJobSuite({
    files: shortFiles,
    input: { modelLimits: MODEL_LIMITS, timeouts: TEST_TIMEOUTS, tools: ['Read'] },
  });

  test('turns itself off with a notice; prompt-too-long then compacts reactively and the job completes', async () => {
    const faults = [0, 1, 2].flatMap(failingCompaction);
    await suite.withJob('compact-fails', { session: shortScript(faults) }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      const events = notices(await snapshot(handle));
      const compactions = server.compactionRequests();
      console.log(`failing compactions: ${JSON.stringify(terminal.transitions)}; notices:\n  ${events.join('\n  ')}`);

      // Three compactions, each tried as often as the activity allows, on three turns in a row.
      const failedTurns = [0, 1, 2].map((index) =>
        compactions.filter((r) => r.compaction === index).map((r) => r.turn),
      );
      for (const turns of failedTurns) expect(turns).toEqual([turns[0], turns[0], turns[0], turns[0]]);
      expect(failedTurns.map((turns) => turns[0])).toEqual([0, 1, 2].map((k) => (failedTurns[0]?.[0] ?? 0) + k));
      expect(events.filter((text) => text.startsWith('compaction failed'))).toHaveLength(2);
      const off = events.find((text) => text.startsWith('autocompact stopped'));
      expect(off).toContain('3 compactions in a row failed');
      expect(off).toContain('summary service down (compaction 2)');

      // Later the prompt outgrew the window: the API's 400 on that turn made the job compact once
      // (reactive compaction is not autocompact, so it still runs), which worked, the turn was
      // asked again, and the job went on to the end.
      const reactive = compactions.filter((r) => (r.compaction ?? 0) > 2);
      expect(reactive).toHaveLength(1);
      const reactiveTurn = reactive[0]?.turn ?? -1;
      expect(reactiveTurn).toBeGreaterThan(failedTurns[2]?.[0] ?? 0);
      expect(server.requests.filter((r) => r.kind === 'turn' && r.turn === reactiveTurn)).toHaveLength(2);
      expect(terminal.reason).toBe('completed');
      expect(terminal.finalText).toBe(SHORT_FINAL);
      expect(terminal.turnCount).toBe(SHORT_TURNS);
      expect(terminal.transitions?.autocompact).toBeUndefined();
      expect(terminal.transitions?.reactive_compact).toBe(1);
      expect(terminal.transitions?.reactive_compact_retry).toBe(1);
      expect(terminal.context?.compactions).toBe(1);
      // A compaction that works again (the reactive one) turns autocompact back on, as Claude Code's
      // breaker resets on success, and the job says so.
      expect(terminal.context?.autocompactOff).toBeUndefined();
      expect(events).toContain('autocompact back on: a compaction worked again');
    });
  });

  test('when every compaction fails, the job ends prompt_too_long saying what to change', async () => {
    const faults = [0, 1, 2, 3, 4, 5].flatMap(failingCompaction);
    await suite.withJob('compact-fails-all', { session: shortScript(faults) }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      console.log(`every compaction fails: ${terminal.reason} at turn ${terminal.turnCount}: ${terminal.detail}`);
      expect(terminal.reason).toBe('prompt_too_long');
      expect(terminal.turnCount).toBeLessThan(SHORT_TURNS);
      expect(terminal.detail).toMatch(/prompt is too long: \d+ tokens > 40000 maximum/);
      expect(terminal.detail).toContain('compacting it failed');
      expect(terminal.detail).toContain('starting the job again later may be enough');
      expect(terminal.detail).toContain('40000 tokens, from settings');
      expect(terminal.detail).toContain('--model');
      expect(terminal.detail).toContain('modelLimits');
      expect(terminal.context?.autocompactOff).toContain('3 compactions in a row failed');
      expect(server.compactionRequests().filter((r) => (r.compaction ?? 0) > 2).length).toBeGreaterThanOrEqual(1);
    });
  });
});
