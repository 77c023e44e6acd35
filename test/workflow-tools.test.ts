/**
 * Phase 4 of a turn, end to end: the workflow's tool scheduler (the seed's StreamingToolExecutor)
 * against a real Temporal dev server, an in-process worker and the scripted model server.
 *
 * Concurrency is made observable with named pipes: `cat x.fifo` is a read-only (so
 * concurrency-safe) Bash command that blocks until the test writes to the pipe, so a test decides
 * when each call finishes and can see, through the `snapshot` query, which calls run at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import type { ScriptedSession } from '../src/model-server';
import type { SessionEvent, SessionSnapshot } from '../src/shared/session';
import { waitFor } from './support/harness';
import {
  liveProcesses,
  resultText,
  scriptedJobSuite,
  snapshot,
  textReply,
  toolResultsOf,
  toolUse,
  waitForSnapshot,
  terminalOf,
} from './support/jobs';

// ---------------------------------------------------------------------------------------------
// Helpers used only here (the shared ones are in support/jobs.ts)

const finalReply = (text = 'All done.') => textReply(text);

const runningIds = (s: SessionSnapshot) => s.runningTools.map((t) => t.toolUseId).sort();
const hasResult = (s: SessionSnapshot, id: string) =>
  s.events.some((e) => e.kind === 'tool_result' && e.toolUseId === id);

/** Sequence numbers of a tool's start and finish in the event log. */
function toolSpan(events: SessionEvent[], id: string): { start: number; end: number } {
  const start = events.find((e) => e.kind === 'tool_call' && e.toolUseId === id)?.seq;
  const end = events.find((e) => e.kind === 'tool_result' && e.toolUseId === id)?.seq;
  if (start === undefined || end === undefined) throw new Error(`tool ${id} has no start/finish events`);
  return { start, end };
}

/** Write to a named pipe without blocking the event loop (the open waits for a reader). */
async function release(fifo: string, text: string): Promise<void> {
  await fs.promises.writeFile(fifo, text);
}

// ---------------------------------------------------------------------------------------------

describe('workflow: tool scheduling', () => {
  const { withJob } = scriptedJobSuite();

  test('Read, Grep and Glob in one reply all run, start together, and answer in request order', async () => {
    const files = {
      'notes/alpha.txt': 'alpha line one\nalpha line two\n',
      'src/beta.ts': 'export const betaMarker = 1;\n',
      'docs/guide.md': '# Guide\n',
      'docs/more.md': '# More\n',
    };
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            { type: 'text', text: 'Looking at several things at once.' },
            toolUse('toolu_read_alpha', 'Read', { file_path: 'notes/alpha.txt' }),
            toolUse('toolu_grep_beta', 'Grep', { pattern: 'betaMarker' }),
            toolUse('toolu_glob_md', 'Glob', { pattern: '**/*.md' }),
            toolUse('toolu_read_beta', 'Read', { file_path: 'src/beta.ts' }),
          ],
        },
        finalReply(),
      ],
    };
    await withJob('safe-batch', { session, files }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.turnCount).toBe(2);
      expect(server.requests).toHaveLength(2);

      const results = toolResultsOf(server, 1);
      expect(results.map((r) => r.tool_use_id)).toEqual([
        'toolu_read_alpha',
        'toolu_grep_beta',
        'toolu_glob_md',
        'toolu_read_beta',
      ]);
      expect(results.every((r) => r.is_error !== true)).toBe(true);
      expect(resultText(results[0])).toContain('alpha line two');
      expect(resultText(results[1])).toContain('src/beta.ts');
      expect(resultText(results[2])).toContain('docs/guide.md');
      expect(resultText(results[2])).toContain('docs/more.md');
      expect(resultText(results[3])).toContain('betaMarker');

      // All four were started before any of them finished: they ran as one concurrent batch.
      const { events } = await snapshot(handle);
      const ids = results.map((r) => r.tool_use_id);
      const lastStart = Math.max(...ids.map((id) => toolSpan(events, id).start));
      const firstEnd = Math.min(...ids.map((id) => toolSpan(events, id).end));
      expect(lastStart).toBeLessThan(firstEnd);
    });
  });

  test('a Read of an image and of a PDF reaches the model as image and document blocks', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==';
    // Three pages of widths 101, 102 and 103 points: the Read asks for page 2 alone.
    const three = await PDFDocument.create();
    for (const width of [101, 102, 103]) three.addPage([width, 200]);
    const pdf = Buffer.from(await three.save()).toString('base64');
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            toolUse('toolu_make', 'Bash', {
              command: `echo ${png} | base64 -d > red.png && echo ${pdf} | base64 -d > doc.pdf`,
            }),
          ],
        },
        {
          content: [
            toolUse('toolu_png', 'Read', { file_path: 'red.png' }),
            toolUse('toolu_pdf', 'Read', { file_path: 'doc.pdf', pages: '2' }),
          ],
        },
        finalReply(),
      ],
    };
    await withJob('media', { session }, async ({ server, handle }) => {
      expect((await terminalOf(handle)).reason).toBe('completed');
      // The strict server accepted them (a 400 would have failed the job), and saw them as blocks.
      const [image, document] = toolResultsOf(server, 2);
      expect(image?.content).toEqual([
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      ]);
      expect(document?.content).toEqual([
        expect.objectContaining({
          type: 'text',
          text: expect.stringContaining('PDF pages extracted: 1 page(s) from doc.pdf'),
        }),
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: expect.any(String) } },
      ]);
      const sent = (document?.content as { source?: { data: string } }[])[1]?.source?.data ?? '';
      const pages = (await PDFDocument.load(Buffer.from(sent, 'base64'))).getPages();
      expect(pages.map((page) => page.getWidth())).toEqual([102]);
    });
  });

  test('two read-only Bash calls really overlap; the one that finishes first still answers second', async () => {
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            toolUse('toolu_cat_a', 'Bash', { command: 'cat gate-a.fifo' }),
            toolUse('toolu_cat_b', 'Bash', { command: 'cat gate-b.fifo' }),
          ],
        },
        finalReply(),
      ],
    };
    const files = {};
    await withJob(
      'overlap',
      { session, files, fifos: ['gate-a.fifo', 'gate-b.fifo'] },
      async ({ server, handle, workspace }) => {
        const gateA = path.join(workspace, 'gate-a.fifo');
        const gateB = path.join(workspace, 'gate-b.fifo');

        // Both running at the same moment.
        const both = await waitForSnapshot(handle, (s) => s.runningTools.length === 2, 'both Bash calls to run');
        expect(runningIds(both)).toEqual(['toolu_cat_a', 'toolu_cat_b']);
        expect(both.phase).toBe('running_tools');

        // B finishes while A is still running...
        await release(gateB, 'output of b\n');
        const afterB = await waitForSnapshot(handle, (s) => hasResult(s, 'toolu_cat_b'), 'B to finish');
        expect(runningIds(afterB)).toEqual(['toolu_cat_a']);
        expect(hasResult(afterB, 'toolu_cat_a')).toBe(false);
        // ... and the next request is not sent before A is done too.
        expect(server.requests).toHaveLength(1);

        await release(gateA, 'output of a\n');
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');

        const results = toolResultsOf(server, 1);
        expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_cat_a', 'toolu_cat_b']);
        expect(resultText(results[0])).toContain('output of a');
        expect(resultText(results[1])).toContain('output of b');
        expect(results.every((r) => r.is_error !== true)).toBe(true);
      },
    );
  });

  test('a Write between reads runs alone; later reads see its effect; results stay in order', async () => {
    const files = { 'a.txt': 'file a\n', 'b.txt': 'file b\n' };
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            toolUse('toolu_r1', 'Read', { file_path: 'a.txt' }),
            toolUse('toolu_r2', 'Read', { file_path: 'b.txt' }),
            toolUse('toolu_w1', 'Write', { file_path: 'c.txt', content: 'written by the model\n' }),
            toolUse('toolu_r3', 'Read', { file_path: 'c.txt' }),
            toolUse('toolu_g1', 'Grep', { pattern: 'written by', output_mode: 'content' }),
          ],
        },
        finalReply(),
      ],
    };
    await withJob('writer-alone', { session, files }, async ({ server, handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(fs.readFileSync(path.join(workspace, 'c.txt'), 'utf8')).toBe('written by the model\n');

      const results = toolResultsOf(server, 1);
      expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_r1', 'toolu_r2', 'toolu_w1', 'toolu_r3', 'toolu_g1']);
      expect(results.map((r) => r.is_error === true)).toEqual([false, false, false, false, false]);
      expect(resultText(results[3])).toContain('written by the model');
      expect(resultText(results[4])).toContain('c.txt');

      const { events } = await snapshot(handle);
      const [r1, r2, w1, r3, g1] = ['toolu_r1', 'toolu_r2', 'toolu_w1', 'toolu_r3', 'toolu_g1'].map((id) =>
        toolSpan(events, id),
      ) as Array<{ start: number; end: number }>;
      // The two reads before the Write ran together...
      expect(Math.max(r1!.start, r2!.start)).toBeLessThan(Math.min(r1!.end, r2!.end));
      // ... the Write started only after both finished, and finished before anything else started.
      expect(w1!.start).toBeGreaterThan(Math.max(r1!.end, r2!.end));
      expect(w1!.end).toBeLessThan(Math.min(r3!.start, g1!.start));
      // ... and the reads after it ran together again.
      expect(Math.max(r3!.start, g1!.start)).toBeLessThan(Math.min(r3!.end, g1!.end));
    });
  });

  test('a failing read-only Bash cancels its running sibling and the calls queued behind it', async () => {
    const marker = `never-${process.pid}-${Date.now()}.fifo`;
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            // Blocks until cancelled: nobody ever writes to this pipe.
            toolUse('toolu_blocked', 'Bash', { command: `cat ${marker}` }),
            // Read-only too, so it runs beside the first one; fails with exit code 1.
            toolUse('toolu_failing', 'Bash', { command: 'cat missing-file.txt' }),
            // Not concurrency-safe: waits behind the batch, so it is still queued at the failure.
            toolUse('toolu_write', 'Write', { file_path: 'should-not-exist.txt', content: 'x' }),
            toolUse('toolu_read_after', 'Read', { file_path: 'present.txt' }),
          ],
        },
        finalReply('Noted the failure.'),
      ],
    };
    const files = { 'present.txt': 'here\n' };
    await withJob('bash-fails', { session, files, fifos: [marker] }, async ({ server, handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.turnCount).toBe(2);

      const results = toolResultsOf(server, 1);
      expect(results.map((r) => r.tool_use_id)).toEqual([
        'toolu_blocked',
        'toolu_failing',
        'toolu_write',
        'toolu_read_after',
      ]);
      expect(results.every((r) => r.is_error === true)).toBe(true);
      expect(resultText(results[1])).toMatch(/missing-file\.txt/);
      expect(resultText(results[1])).toMatch(/Exit code 1/);
      // The running sibling was stopped because of the failed call, and says which one.
      expect(resultText(results[0])).toMatch(/cancel/i);
      expect(resultText(results[0])).toMatch(/parallel tool call/);
      expect(resultText(results[0])).toContain('cat missing-file.txt');
      expect(resultText(results[0])).toMatch(/was stopped/);
      // Queued calls never ran.
      for (const queued of [results[2], results[3]]) {
        expect(resultText(queued)).toMatch(/parallel tool call .* failed/);
        expect(resultText(queued)).toMatch(/did not run/);
      }
      expect(fs.existsSync(path.join(workspace, 'should-not-exist.txt'))).toBe(false);
      // The cancelled command's process is gone (activity cancellation reaches it on a heartbeat).
      await waitFor(async () => (liveProcesses(marker).length === 0 ? true : undefined), 15_000, 'cat to be killed');
    });
  });

  test('a failing non-read-only Bash (exit 3) runs alone and the calls after it do not run', async () => {
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            toolUse('toolu_read_first', 'Read', { file_path: 'present.txt' }),
            toolUse('toolu_exit', 'Bash', { command: 'echo failing now; exit 3' }),
            toolUse('toolu_touch', 'Bash', { command: 'touch touched.txt' }),
            toolUse('toolu_grep_after', 'Grep', { pattern: 'here' }),
          ],
        },
        finalReply(),
      ],
    };
    const files = { 'present.txt': 'here\n' };
    await withJob('bash-exit-3', { session, files }, async ({ server, handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      const results = toolResultsOf(server, 1);
      expect(results.map((r) => r.tool_use_id)).toEqual([
        'toolu_read_first',
        'toolu_exit',
        'toolu_touch',
        'toolu_grep_after',
      ]);
      // The Read before the failure had finished: its real result is kept.
      expect(results[0]?.is_error).not.toBe(true);
      expect(resultText(results[0])).toContain('here');
      expect(results[1]?.is_error).toBe(true);
      expect(resultText(results[1])).toContain('failing now');
      expect(resultText(results[1])).toMatch(/Exit code 3/);
      for (const queued of [results[2], results[3]]) {
        expect(queued?.is_error).toBe(true);
        expect(resultText(queued)).toMatch(/parallel tool call Bash\(echo failing now; exit 3\) failed/);
        expect(resultText(queued)).toMatch(/did not run/);
      }
      expect(fs.existsSync(path.join(workspace, 'touched.txt'))).toBe(false);
    });
  });

  test('a failing Read does not cancel its siblings', async () => {
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            toolUse('toolu_slow_cat', 'Bash', { command: 'cat gate.fifo' }),
            toolUse('toolu_missing', 'Read', { file_path: 'does-not-exist.txt' }),
            toolUse('toolu_ok', 'Read', { file_path: 'present.txt' }),
          ],
        },
        finalReply(),
      ],
    };
    const files = { 'present.txt': 'present content\n' };
    await withJob('read-fails', { session, files, fifos: ['gate.fifo'] }, async ({ server, handle, workspace }) => {
      const gate = path.join(workspace, 'gate.fifo');
      // The Read has failed while the Bash call is still running...
      const s = await waitForSnapshot(
        handle,
        (snap) => hasResult(snap, 'toolu_missing') && hasResult(snap, 'toolu_ok'),
        'the Reads to finish',
      );
      expect(runningIds(s)).toEqual(['toolu_slow_cat']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(runningIds(await snapshot(handle))).toEqual(['toolu_slow_cat']);
      // ... and the Bash call is left to finish normally.
      await release(gate, 'gate opened\n');
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      const results = toolResultsOf(server, 1);
      expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_slow_cat', 'toolu_missing', 'toolu_ok']);
      expect(results.map((r) => r.is_error === true)).toEqual([false, true, false]);
      expect(resultText(results[0])).toContain('gate opened');
      expect(resultText(results[1])).toMatch(/does not exist/i);
      expect(resultText(results[2])).toContain('present content');
    });
  });

  test('an unknown tool and malformed inputs become is_error tool_results; the job completes', async () => {
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            toolUse('toolu_unknown', 'Frobnicate', { target: 'everything' }),
            toolUse('toolu_bad_type', 'Read', { file_path: 42 }),
            toolUse('toolu_bad_key', 'Read', { path: 'present.txt' }),
            toolUse('toolu_good', 'Read', { file_path: 'present.txt' }),
            // Last: a Bash error of any kind (even a bad input) would cancel the calls after it,
            // as in the seed's StreamingToolExecutor.
            toolUse('toolu_bad_bash', 'Bash', { command: 'echo hi', timeout: 'soon' }),
          ],
        },
        finalReply('I will fix my calls.'),
      ],
    };
    const files = { 'present.txt': 'good content\n' };
    await withJob('bad-input', { session, files }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.finalText).toBe('I will fix my calls.');
      const results = toolResultsOf(server, 1);
      expect(results.map((r) => r.tool_use_id)).toEqual([
        'toolu_unknown',
        'toolu_bad_type',
        'toolu_bad_key',
        'toolu_good',
        'toolu_bad_bash',
      ]);
      expect(results.map((r) => r.is_error === true)).toEqual([true, true, true, false, true]);
      // A tool the job does not offer is answered before hooks and rules, in Claude Code's words.
      expect(resultText(results[0])).toBe('<tool_use_error>Error: No such tool available: Frobnicate</tool_use_error>');
      expect(resultText(results[1])).toContain('The parameter `file_path` type is expected as `string`');
      expect(resultText(results[2])).toBe(
        '<tool_use_error>InputValidationError: Read failed due to the following issues:\n' +
          'The required parameter `file_path` is missing\n' +
          'An unexpected parameter `path` was provided</tool_use_error>',
      );
      expect(resultText(results[3])).toContain('good content');
      // The bad Bash never ran: the validation failure is the whole result.
      expect(resultText(results[4])).toMatch(/^<tool_use_error>InputValidationError: Bash failed[^]*`timeout`/);
      expect(resultText(results[4])).not.toMatch(/^hi$/m);
    });
  });
});
