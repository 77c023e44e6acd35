import fs from 'node:fs';
import path from 'node:path';
import { markReachable, objectPath, sweepObjects } from '../src/activities/store/gc';
import { FileContentStore } from '../src/activities/store/content-store';
import { TranscriptStore } from '../src/activities/store/transcript-store';
import { ToolJournal } from '../src/activities/tool-journal';
import { journalFolderName, sweepDataHomes, sweepWorkspaceData } from '../src/activities/workspace-gc';
import { workspaceHome } from '../src/activities/store/workspace-home';
import { formatAge, parseAge, retentionFromEnv } from '../src/client/config';
import { parseOlderThan } from '../src/client/prune';
import { collectRefs } from '../src/client/prune-jobs';
import type { Message, ToolResultBlock } from '../src/shared/messages';
import { initialState } from '../src/shared/session';
import type { State } from '../src/shared/session';
import type { ContentRef, TranscriptRef } from '../src/shared/transcript';
import { storeRoots } from '../src/workflows/store-roots';
import { makeWorkspace, sessionInput, tempDir } from './support/harness';

const DAY = 24 * 60 * 60_000;
const hexOf = (ref: ContentRef) => ref.slice('sha256:'.length);
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

/** Every object file of a store, by hex digest. */
function storedObjects(root: string): Set<string> {
  const found = new Set<string>();
  const objects = path.join(root, 'objects');
  if (!fs.existsSync(objects)) return found;
  for (const fanOut of fs.readdirSync(objects)) {
    for (const name of fs.readdirSync(path.join(objects, fanOut))) {
      if (/^[0-9a-f]{62}$/.test(name)) found.add(fanOut + name);
    }
  }
  return found;
}

/** Make every file under `dir` look written `ms` ago. */
function age(dir: string, ms: number): void {
  const when = new Date(Date.now() - ms);
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) fs.utimesSync(path.join(entry.parentPath, entry.name), when, when);
  }
}

describe('mark and sweep of the content store', () => {
  test('pruning a closed job keeps every object the open job that shares its prefix needs', async () => {
    const root = tempDir('gc-store');
    const store = new FileContentStore(root);
    const transcripts = new TranscriptStore(store);
    const empty: TranscriptRef = { head: null, messageCount: 0 };

    // Two jobs with the same prompt and the same first reply: the same first segments.
    const shared = await transcripts.append(await transcripts.append(empty, [user('Check the login module')]), [
      assistant('Looking.'),
    ]);
    // The closed job went on alone.
    const bigResult: ToolResultBlock = { type: 'tool_result', tool_use_id: 't1', content: 'x'.repeat(5_000) };
    const closedResult = await store.put(bigResult);
    const closedHead = await transcripts.append(shared, [
      { role: 'user', content: [bigResult] },
      assistant(`Done; see ${closedResult}.`),
    ]);
    const closedPrompt = await store.put('system prompt of the closed job');

    // The open job: a compaction link, a message quoting a stored result, a pending tool result.
    const quoted = await store.put({ type: 'tool_result', tool_use_id: 'q', content: 'quoted elsewhere' });
    const compacted = await store.put({
      prev: null,
      messages: [
        user(`Summary. Earlier output: ${quoted}; saved to .durable-agent/tool-results/Bash-0123456789abcdef.txt`),
      ],
      compactedFrom: shared.head,
    });
    const openHead = await transcripts.append({ head: compacted, messageCount: 1 }, [assistant('Continuing.')]);
    const pendingResult = await store.put({ type: 'tool_result', tool_use_id: 't2', content: 'pending' });
    const openPrompt = await store.put('system prompt of the open job');
    const openState: State = {
      ...initialState(sessionInput('/ws')),
      transcript: openHead,
      pending: [
        {
          role: 'user',
          content: [{ type: 'tool_result_ref', tool_use_id: 't2', ref: pendingResult, is_error: false }],
        },
      ],
    };

    const before = storedObjects(root);
    age(root, 2 * DAY);
    const marked = await markReachable(root, storeRoots(openState, openPrompt));
    const report = await sweepObjects(root, marked, { cutoffMs: Date.now() - DAY, dryRun: false });
    const after = storedObjects(root);

    const open = [openHead.head, compacted, shared.head, quoted, pendingResult, openPrompt] as ContentRef[];
    for (const ref of open) expect(after.has(hexOf(ref))).toBe(true);
    // The shared prefix is reached twice (through prev and through compactedFrom) and kept once.
    expect((await transcripts.load(shared)).map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'Check the login module' }],
      [{ type: 'text', text: 'Looking.' }],
    ]);
    expect(await transcripts.load(openHead)).toHaveLength(2);
    for (const ref of [closedHead.head, closedResult, closedPrompt] as ContentRef[]) {
      expect(before.has(hexOf(ref))).toBe(true);
      expect(after.has(hexOf(ref))).toBe(false);
    }
    expect(marked.resultFiles).toEqual(new Set(['Bash-0123456789abcdef.txt']));
    expect(report.removed.count).toBe(3);
    expect(report.live.count).toBe(after.size);
    expect(report.removed.bytes).toBeGreaterThan(5_000);
  });

  test('the walk ends on malformed objects: cycles, garbage, a folder in place of an object, missing refs', async () => {
    const root = tempDir('gc-malformed');
    const hex = (c: string) => c.repeat(64);
    const write = (h: string, text: string) => {
      fs.mkdirSync(path.dirname(objectPath(root, h)), { recursive: true });
      fs.writeFileSync(objectPath(root, h), text);
    };
    // Content that does not match its name: only a damaged store holds such files.
    write(hex('a'), `{"prev":"sha256:${hex('b')}"}`);
    write(hex('b'), `{"prev":"sha256:${hex('a')}","also":"sha256:${hex('b')}","gone":"sha256:${hex('c')}"}`);
    write(hex('d'), '\u0000not json at all sha256:' + hex('a'));
    fs.mkdirSync(objectPath(root, hex('e')), { recursive: true });
    write(hex('f'), 'unreached');

    const marked = await markReachable(root, [`sha256:${hex('a')}`, `sha256:${hex('d')}`, `sha256:${hex('e')}`]);
    expect(marked.objects).toEqual(new Set([hex('a'), hex('b'), hex('d'), hex('e')]));
    expect(marked.missing).toEqual(new Set([`sha256:${hex('c')}`]));

    age(root, 2 * DAY);
    const report = await sweepObjects(root, marked, { cutoffMs: Date.now() - DAY, dryRun: false });
    expect(report.removed.count).toBe(1);
    expect(fs.existsSync(objectPath(root, hex('f')))).toBe(false);
    expect(fs.existsSync(objectPath(root, hex('a')))).toBe(true);
    expect(fs.statSync(objectPath(root, hex('e'))).isDirectory()).toBe(true);
  });

  test('objects newer than the age stay even when nothing reaches them; a dry run removes nothing', async () => {
    const root = tempDir('gc-age');
    const store = new FileContentStore(root);
    const old = await store.put({ note: 'old and unreached' });
    age(root, 3 * DAY);
    const fresh = await store.put({ note: 'just written by an activity that has not reported it yet' });
    const oldTemp = `${objectPath(root, hexOf(old))}.0a0b0c.tmp`;
    const freshTemp = `${objectPath(root, hexOf(fresh))}.0d0e0f.tmp`;
    fs.writeFileSync(oldTemp, 'half a write');
    fs.utimesSync(oldTemp, new Date(Date.now() - 3 * DAY), new Date(Date.now() - 3 * DAY));
    fs.writeFileSync(freshTemp, 'a write in progress');
    const cutoffMs = Date.now() - DAY;
    const marked = await markReachable(root, []);

    const dry = await sweepObjects(root, marked, { cutoffMs, dryRun: true });
    expect(dry.removed.count).toBe(1);
    expect(dry.recent.count).toBe(1);
    expect(dry.abandoned.count).toBe(1);
    expect(storedObjects(root).size).toBe(2);
    expect(fs.existsSync(oldTemp)).toBe(true);

    const real = await sweepObjects(root, marked, { cutoffMs, dryRun: false });
    expect({ removed: real.removed.count, recent: real.recent.count }).toEqual({ removed: 1, recent: 1 });
    expect(storedObjects(root)).toEqual(new Set([hexOf(fresh)]));
    expect(fs.existsSync(oldTemp)).toBe(false);
    expect(fs.existsSync(freshTemp)).toBe(true);
    expect(await store.get(fresh)).toEqual({ note: 'just written by an activity that has not reported it yet' });
  });

  test('an object a killed sweep left aside is put back', async () => {
    const root = tempDir('gc-aside');
    const store = new FileContentStore(root);
    const ref = await store.put({ note: 'was being checked' });
    const file = objectPath(root, hexOf(ref));
    fs.renameSync(file, `${file}.abcdef012345.gc`);
    await sweepObjects(root, await markReachable(root, []), { cutoffMs: Date.now() - DAY, dryRun: false });
    expect(await new FileContentStore(root).get(ref)).toEqual({ note: 'was being checked' });
  });
});

describe("a job's roots", () => {
  test('the head, pending tool results, the turn in progress, the system prompt, and any other ref the State holds', () => {
    const ref = (c: string) => `sha256:${c.repeat(64)}`;
    const base = initialState(sessionInput('/ws'));
    const loopState: State = {
      ...base,
      transcript: { head: ref('1'), messageCount: 2 },
      pending: [
        {
          role: 'user',
          content: [
            { type: 'tool_result_ref', tool_use_id: 'a', ref: ref('2'), is_error: false },
            { type: 'text', text: 'more' },
          ],
        },
      ],
    };
    const turnState: State = { ...base, transcript: { head: ref('3'), messageCount: 3 }, pending: [] };
    const later = { ...base, somethingNew: { kept: ref('4') } } as State;
    expect(storeRoots(loopState, ref('5'), turnState).sort()).toEqual([ref('1'), ref('2'), ref('3'), ref('5')]);
    expect(storeRoots(base, undefined)).toEqual([]);
    expect(storeRoots(later, ref('5'), later)).toEqual([ref('4'), ref('5')]);
  });

  test('refs are found in history payload bytes and strings', () => {
    const ref = `sha256:${'9'.repeat(64)}`;
    const found = new Set<string>();
    collectRefs(
      [{ attributes: { result: { payloads: [{ data: new TextEncoder().encode(JSON.stringify({ ref })) }] } } }],
      found,
    );
    collectRefs({ note: `head ${ref.replace('9', '8')}` }, found);
    expect(found).toEqual(new Set([ref, ref.replace('9', '8')]));
  });
});

describe('journal entries and result files in workspaces', () => {
  const entry = (toolUseId: string) => ({ status: 'started' as const, toolUseId, name: 'Bash', startedAt: 'then' });

  test('open and recent jobs keep their journal; old entries of others and unmentioned result files go', async () => {
    const storeRoot = tempDir('gc-homes');
    const workspace = makeWorkspace({ 'app.txt': 'x\n' });
    const openJournal = await ToolJournal.open(storeRoot, workspace, 'open-job/run-1');
    const closedJournal = await ToolJournal.open(storeRoot, workspace, 'closed-job/run-1');
    await openJournal.write(entry('o1'));
    await closedJournal.write(entry('c1'));
    await closedJournal.write(entry('c2'));
    const home = await workspaceHome(storeRoot, workspace);
    const results = path.join(home, '.durable-agent', 'tool-results');
    fs.mkdirSync(results, { recursive: true });
    fs.writeFileSync(path.join(results, 'Bash-mentioned00000.txt'), 'still shown to an open job');
    fs.writeFileSync(path.join(results, 'Grep-forgotten00000.txt'), 'nobody points here');
    age(home, 2 * DAY);
    fs.writeFileSync(path.join(results, 'result-justwritten00.txt'), 'a tool is still running');

    const journalDir = path.join(home, 'journal');
    expect(fs.readdirSync(journalDir).sort()).toEqual(
      [journalFolderName('open-job/run-1'), journalFolderName('closed-job/run-1')].sort(),
    );
    // Nothing of the journal is in the workspace.
    expect(fs.existsSync(path.join(workspace, '.durable-agent'))).toBe(false);
    const options = {
      cutoffMs: Date.now() - DAY,
      keepJournals: new Set([journalFolderName('open-job/run-1')]),
      keepResultFiles: new Set(['Bash-mentioned00000.txt']),
    };
    const dry = await sweepDataHomes(storeRoot, { ...options, dryRun: true });
    expect(dry.journal.removed.count).toBe(2);
    expect(fs.readdirSync(journalDir)).toHaveLength(2);

    const report = await sweepDataHomes(storeRoot, { ...options, dryRun: false });
    expect(report.journal.removed.count).toBe(2);
    expect(report.journal.kept.count).toBe(1);
    expect(fs.readdirSync(journalDir)).toEqual([journalFolderName('open-job/run-1')]);
    expect(await openJournal.read('o1')).toMatchObject({ status: 'started' });
    expect(report.toolResults.removed.count).toBe(1);
    expect(fs.readdirSync(results).sort()).toEqual(['Bash-mentioned00000.txt', 'result-justwritten00.txt']);
    // The folder comes back when the job writes again (each tool call opens its own journal).
    await (await ToolJournal.open(storeRoot, workspace, 'closed-job/run-1')).write(entry('c3'));
    expect(await (await ToolJournal.open(storeRoot, workspace, 'closed-job/run-1')).read('c3')).toMatchObject({
      toolUseId: 'c3',
    });
  });

  test('journals older workers left in the workspace are honoured, and swept the same way', async () => {
    const storeRoot = tempDir('gc-legacy');
    const workspace = makeWorkspace({ 'app.txt': 'x\n' });
    const legacy = (sessionKey: string, toolUseId: string) => {
      const dir = path.join(workspace, '.durable-agent', 'journal', journalFolderName(sessionKey));
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `${toolUseId}.json`), JSON.stringify(entry(toolUseId)));
    };
    legacy('open-job/run-1', 'o1');
    legacy('closed-job/run-1', 'c1');
    legacy('closed-job/run-1', 'c2');
    const results = path.join(workspace, '.durable-agent', 'tool-results');
    fs.mkdirSync(results, { recursive: true });
    fs.writeFileSync(path.join(results, 'Bash-mentioned00000.txt'), 'still shown to an open job');
    fs.writeFileSync(path.join(results, 'Grep-forgotten00000.txt'), 'nobody points here');
    age(path.join(workspace, '.durable-agent'), 2 * DAY);

    // A job in flight across the upgrade still finds what its earlier attempt recorded.
    const openJournal = await ToolJournal.open(storeRoot, workspace, 'open-job/run-1');
    expect(await openJournal.read('o1')).toEqual(entry('o1'));

    const journalDir = path.join(workspace, '.durable-agent', 'journal');
    const report = await sweepWorkspaceData(workspace, {
      cutoffMs: Date.now() - DAY,
      dryRun: false,
      keepJournals: new Set([journalFolderName('open-job/run-1')]),
      keepResultFiles: new Set(['Bash-mentioned00000.txt']),
    });
    expect(report.journal.removed.count).toBe(2);
    expect(report.journal.kept.count).toBe(1);
    expect(fs.readdirSync(journalDir)).toEqual([journalFolderName('open-job/run-1')]);
    expect(report.toolResults.removed.count).toBe(1);
    expect(fs.readdirSync(results)).toEqual(['Bash-mentioned00000.txt']);
  });

  test('a symlink planted in .durable-agent is not followed', async () => {
    const workspace = makeWorkspace({});
    const outside = makeWorkspace({ 'precious.json': '{}' });
    fs.mkdirSync(path.join(workspace, '.durable-agent'));
    fs.symlinkSync(outside, path.join(workspace, '.durable-agent', 'journal'));
    fs.symlinkSync(outside, path.join(workspace, '.durable-agent', 'tool-results'));
    age(outside, 2 * DAY);
    const report = await sweepWorkspaceData(workspace, {
      cutoffMs: Date.now() - DAY,
      dryRun: false,
      keepJournals: new Set(),
      keepResultFiles: new Set(),
    });
    expect(report.journal.removed.count + report.toolResults.removed.count).toBe(0);
    expect(fs.existsSync(path.join(outside, 'precious.json'))).toBe(true);
  });
});

describe('ages', () => {
  test('m, h and d are read; anything else is refused saying the accepted form', () => {
    expect(parseAge('30m')).toBe(30 * 60_000);
    expect(parseAge('12h')).toBe(12 * 60 * 60_000);
    expect(parseAge(' 7d ')).toBe(7 * DAY);
    for (const nonsense of ['', '7', 'd', '0d', '1.5h', '-3d', '7 days', '1d12h', '10s', '99999999999999d']) {
      expect(parseAge(nonsense)).toBeUndefined();
    }
    expect(formatAge(7 * DAY)).toBe('7d');
    expect(formatAge(36 * 60 * 60_000)).toBe('36h');
    expect(formatAge(90 * 60_000)).toBe('90m');

    expect(parseOlderThan('7d')).toBe(7 * DAY);
    expect(() => parseOlderThan('soon')).toThrow(
      'Use an age: a whole number followed by m (minutes), h (hours) or d (days), e.g. 30m, 12h or 7d.',
    );
    expect(() => parseOlderThan('10m')).toThrow('Use 30m or more');
  });

  test('DURABLE_AGENT_RETENTION: 24 hours unless set, an age of at least an hour', () => {
    expect(retentionFromEnv({})).toBe(DAY);
    expect(retentionFromEnv({ DURABLE_AGENT_RETENTION: '30d' })).toBe(30 * DAY);
    expect(() => retentionFromEnv({ DURABLE_AGENT_RETENTION: 'forever' })).toThrow(
      'DURABLE_AGENT_RETENTION="forever" is not an age: use a whole number followed by m (minutes), h (hours) or d (days)',
    );
    expect(() => retentionFromEnv({ DURABLE_AGENT_RETENTION: '30m' })).toThrow('shorter than 1h');
  });
});
