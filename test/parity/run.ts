/**
 * `npm run test:parity`: the scenarios of scenarios.ts through the real Claude Code CLI and through
 * durable-agent's CLI, each against its own scripted model server, each in a fresh copy of the
 * scenario's files; then, per scenario, whether the model was told the same thing (normalise.ts),
 * checked against the expected differences (expectations.ts). Exits 1 when a difference is neither
 * intended nor a known gap, or an intended one is gone.
 *
 * durable-agent runs as a user runs it (`src/client/cli.ts run`), against one Temporal dev server
 * and one worker process shared by all scenarios. The worker has one model base URL, so it points
 * at a small router that hands each request to its scenario's model server, found by the
 * scenario's tag in the prompt.
 *
 * Environment: PARITY_CLAUDE (a claude binary; default: scripts/install-claude-code.sh installs the
 * pinned one), PARITY_ONLY (a regular expression: run only the scenarios it matches),
 * PARITY_CONCURRENCY (scenarios at a time, default 3), PARITY_REPORT (write the results as JSON).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ScriptedReply } from '../../src/model-server';
import { ScriptedModelServer, spawnWorkerProcess, startTemporal } from '../support/harness';
import { exitedWithOutput } from '../support/cli';
import { TS_NODE_ARGS } from '../support/ts-run';
import { FILES, SCENARIOS, type Scenario } from './scenarios';
import { CLAUDE_CODE_ONLY_RESULT_FIELDS, INTENDED, KNOWN_GAPS, ONE_SIDED } from './expectations';
import { contentText, normalise, shortDiff } from './normalise';

const root = path.join(__dirname, '..', '..');
const MODEL = 'claude-sonnet-5-5';
/** The tools Claude Code offers here: its -p default leaves Glob, Grep and TodoWrite out. */
const CC_TOOLS = 'Read,Write,Edit,Glob,Grep,Bash,TodoWrite,NotebookEdit';
const RUN_TIMEOUT_MS = 120_000;
/** Fields of the json result object whose values can match; the others are compared by presence. */
const VALUE_FIELDS = new Set([
  'type',
  'subtype',
  'is_error',
  'num_turns',
  'result',
  'stop_reason',
  'permission_denials',
]);

interface Side {
  stdout: string;
  stderr: string;
  code: number | null;
  requests: ScriptedModelServer['requests'];
  workspace: string;
}

type Status = 'same' | 'intended' | 'known gap' | 'one-sided' | 'UNEXPECTED' | 'INTENDED GONE' | 'gap fixed';

interface Outcome {
  name: string;
  same: boolean;
  status: Status;
  diff: string;
  cc: string;
  da: string;
}

const tag = (name: string) => `parity-scenario:${name}`;
const promptOf = (scenario: Scenario) => `Follow the script. [${tag(scenario.name)}]`;

function repliesOf(scenario: Scenario): ScriptedReply[] {
  let n = 0;
  const replies: ScriptedReply[] = scenario.turns.map((calls) => ({
    content: calls.map((c) => ({ type: 'tool_use' as const, id: `toolu_parity_${++n}`, name: c.tool, input: c.input })),
  }));
  replies.push({ content: [{ type: 'text', text: scenario.final ?? 'Finished.' }] });
  return replies;
}

/** `value` with every `{ws}` and `{port}` in its strings filled in. */
function filledIn(value: unknown, vars: { ws: string; port: number }): unknown {
  if (typeof value === 'string') return value.split('{ws}').join(vars.ws).split('{port}').join(String(vars.port));
  if (Array.isArray(value)) return value.map((v) => filledIn(v, vars));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, filledIn(v, vars)]));
  return value;
}

/** A TCP port on 127.0.0.1 that accepts connections and closes them: what a Bash command may try to reach. */
async function startListener(): Promise<net.Server> {
  const server = net.createServer((socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** The files, each a second older than the next (Glob lists by modification time: ties would make it flaky). */
function makeWorkspace(dir: string, files: Record<string, string>): string {
  fs.mkdirSync(dir, { recursive: true });
  const base = Math.floor(Date.now() / 1000) - 3600;
  for (const [i, [name, content]] of Object.entries(files).entries()) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    fs.utimesSync(file, base + i, base + i);
  }
  return fs.realpathSync(dir);
}

/** Routes each request to the model server of the scenario whose tag its body carries. */
async function startRouter(
  servers: Map<string, ScriptedModelServer>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const name = /parity-scenario:([\w-]+)/.exec(body.toString())?.[1];
      const target = name === undefined ? undefined : servers.get(name);
      if (!target) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'no parity scenario tag' } }),
        );
        return;
      }
      const url = new URL(req.url ?? '/', target.url);
      const headers = { ...req.headers, host: url.host, 'content-length': String(body.length) };
      const upstream = http.request(url, { method: req.method, headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function runProcess(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const code = await exitedWithOutput(child);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

/** A side's output and requests, next to its workspace, for a look after a failed run. */
function keep(dir: string, side: string, run: { stdout: string; stderr: string }, server: ScriptedModelServer): void {
  fs.writeFileSync(path.join(dir, `${side}-stdout.txt`), run.stdout);
  fs.writeFileSync(path.join(dir, `${side}-stderr.txt`), run.stderr);
  fs.writeFileSync(path.join(dir, `${side}-requests.json`), JSON.stringify(server.requests, null, 1));
}

interface Context {
  claude: string;
  runDir: string;
  servers: Map<string, ScriptedModelServer>;
  routerUrl: string;
  temporalAddress: string;
  taskQueue: string;
  daHome: string;
  port: number;
}

function formatOf(scenario: Scenario): 'json' | 'stream-json' {
  return scenario.compare === 'result-object' ? 'json' : 'stream-json';
}

async function runClaudeCode(ctx: Context, scenario: Scenario): Promise<Side> {
  const dir = path.join(ctx.runDir, scenario.name);
  const workspace = makeWorkspace(path.join(dir, 'cc'), scenario.files ?? FILES);
  const home = fs.mkdtempSync(path.join(dir, 'cc-home-'));
  // Claude Code keeps per-project scratch (background output, sockets) under the temp folder.
  const tmp = fs.mkdtempSync(path.join(dir, 'cc-tmp-'));
  const server = await ScriptedModelServer.start({
    name: `cc-${scenario.name}`,
    replies: repliesOf(filledIn(scenario, { ws: workspace, port: ctx.port }) as Scenario),
  });
  const format = formatOf(scenario);
  const args = [
    '-p',
    promptOf(scenario),
    '--output-format',
    format,
    ...(format === 'stream-json' ? ['--verbose'] : []),
  ];
  args.push('--permission-mode', 'bypassPermissions', '--model', MODEL, '--tools', CC_TOOLS);
  try {
    const run = await runProcess(ctx.claude, args, {
      cwd: workspace,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        TMPDIR: tmp,
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'test-key',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        IS_SANDBOX: '1',
      },
    });
    keep(dir, 'cc', run, server);
    return { ...run, requests: server.requests, workspace };
  } finally {
    await server.close();
  }
}

async function runDurableAgent(ctx: Context, scenario: Scenario): Promise<Side> {
  const workspace = makeWorkspace(path.join(ctx.runDir, scenario.name, 'da'), scenario.files ?? FILES);
  const server = await ScriptedModelServer.start({
    name: `da-${scenario.name}`,
    replies: repliesOf(filledIn(scenario, { ws: workspace, port: ctx.port }) as Scenario),
  });
  ctx.servers.set(scenario.name, server);
  const format = formatOf(scenario);
  const args = [...TS_NODE_ARGS, path.join(root, 'src/client/cli.ts'), 'run', promptOf(scenario)];
  args.push('--cwd', workspace, '--job-id', `parity-${scenario.name}-${process.pid}`, '--task-queue', ctx.taskQueue);
  args.push('--permission-mode', 'bypassPermissions', '--model', MODEL, '--output-format', format);
  if (format === 'stream-json') args.push('--verbose');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: ctx.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    DURABLE_AGENT_HOME: ctx.daHome,
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: ctx.routerUrl,
  };
  delete env.CI;
  try {
    const run = await runProcess(process.execPath, args, { cwd: root, env });
    keep(path.join(ctx.runDir, scenario.name), 'da', run, server);
    return { ...run, requests: server.requests, workspace };
  } finally {
    ctx.servers.delete(scenario.name);
    await server.close();
  }
}

type Message = { role: string; content: unknown };
type ResultBlock = { type?: string; tool_use_id?: string; is_error?: boolean; content?: unknown };

/** Every tool_result the model was sent, by tool_use_id (the first one sent). */
function toolResults(side: Side): Map<string, ResultBlock> {
  const found = new Map<string, ResultBlock>();
  for (const request of side.requests) {
    const messages = ((request.body as { messages?: Message[] }).messages ?? []) as Message[];
    for (const message of messages) {
      if (message.role !== 'user' || !Array.isArray(message.content)) continue;
      for (const block of message.content as ResultBlock[]) {
        if (block.type === 'tool_result' && block.tool_use_id && !found.has(block.tool_use_id))
          found.set(block.tool_use_id, block);
      }
    }
  }
  return found;
}

function toolResultsView(scenario: Scenario, side: Side): string {
  const results = toolResults(side);
  const calls = scenario.turns.flat();
  const lines = calls.flatMap((c, i) => {
    if (c.setup) return [];
    const block = results.get(`toolu_parity_${i + 1}`);
    if (!block) return `[${c.tool}] (no tool_result)`;
    const text = normalise(contentText(block.content), [side.workspace, path.resolve(side.workspace)]);
    return `[${c.tool}] is_error=${block.is_error === true}\n${text}`;
  });
  return lines.join('\n');
}

function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

function eventTypesView(side: Side): string {
  const types = jsonLines(side.stdout).map((e) =>
    e.subtype ? `${String(e.type)}/${String(e.subtype)}` : String(e.type),
  );
  return types.length ? types.join('\n') : `(no JSON events; exit ${side.code})`;
}

/** Claude Code's result object's fields, with values where they can match; durable-agent's the same, for those fields. */
function resultObjectViews(cc: Side, da: Side): [string, string] {
  const last = (side: Side) =>
    jsonLines(side.stdout)
      .filter((e) => e.type === 'result')
      .pop();
  const ccObj = last(cc);
  const daObj = last(da);
  if (!ccObj) return [`(no result object; exit ${cc.code})`, daObj ? '(result object)' : '(none)'];
  const view = (obj: Record<string, unknown> | undefined) =>
    Object.keys(ccObj)
      .filter((k) => !(k in CLAUDE_CODE_ONLY_RESULT_FIELDS))
      .sort()
      .map((k) =>
        !obj || !(k in obj)
          ? `${k}: (missing)`
          : VALUE_FIELDS.has(k)
            ? `${k}: ${JSON.stringify(obj[k])}`
            : `${k}: (present)`,
      )
      .join('\n');
  return [view(ccObj), daObj ? view(daObj) : `(no result object; exit ${da.code})\n${da.stderr.slice(-300)}`];
}

function judge(name: string, same: boolean): Status {
  if (name in INTENDED) return same ? 'INTENDED GONE' : 'intended';
  if (name in KNOWN_GAPS) return same ? 'gap fixed' : 'known gap';
  if (name in ONE_SIDED) return 'one-sided';
  return same ? 'same' : 'UNEXPECTED';
}

async function runScenario(ctx: Context, scenario: Scenario): Promise<Outcome> {
  fs.mkdirSync(path.join(ctx.runDir, scenario.name), { recursive: true });
  const [cc, da] = await Promise.all([runClaudeCode(ctx, scenario), runDurableAgent(ctx, scenario)]);
  let ccView: string;
  let daView: string;
  if (scenario.compare === 'result-object') [ccView, daView] = resultObjectViews(cc, da);
  else if (scenario.compare === 'event-types') [ccView, daView] = [eventTypesView(cc), eventTypesView(da)];
  else [ccView, daView] = [toolResultsView(scenario, cc), toolResultsView(scenario, da)];
  const same = ccView === daView;
  return {
    name: scenario.name,
    same,
    status: judge(scenario.name, same),
    diff: shortDiff(ccView, daView),
    cc: ccView,
    da: daView,
  };
}

async function pool<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(size, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  });
  await Promise.all(workers);
  return results;
}

function report(outcomes: Outcome[], seconds: number): boolean {
  const width = Math.max(...outcomes.map((o) => o.name.length), 8);
  console.log(`\n${'scenario'.padEnd(width)}  ${'result'.padEnd(13)}  difference / reason`);
  for (const o of outcomes) {
    const why = INTENDED[o.name] ?? KNOWN_GAPS[o.name] ?? ONE_SIDED[o.name];
    const note = o.same
      ? why
        ? `(listed: ${why})`
        : ''
      : `${o.diff}${why ? `\n${' '.repeat(width + 17)}why: ${why}` : ''}`;
    console.log(`${o.name.padEnd(width)}  ${o.status.padEnd(13)}  ${note}`);
  }
  const comparable = outcomes.filter((o) => !(o.name in INTENDED) && !(o.name in ONE_SIDED));
  const same = comparable.filter((o) => o.same).length;
  const bad = outcomes.filter((o) => o.status === 'UNEXPECTED' || o.status === 'INTENDED GONE');
  const fixed = outcomes.filter((o) => o.status === 'gap fixed');
  console.log(
    `\n${same} of ${comparable.length} comparable scenarios tell the model the same thing ` +
      `(${outcomes.filter((o) => o.name in INTENDED).length} differ on purpose, ` +
      `${outcomes.filter((o) => o.name in ONE_SIDED).length} one-sided, ` +
      `${outcomes.filter((o) => o.status === 'known gap').length} known gaps); ${seconds.toFixed(0)} s`,
  );
  for (const o of fixed)
    console.log(`NOTE: ${o.name} now matches: take it off KNOWN_GAPS in test/parity/expectations.ts`);
  for (const o of bad)
    console.log(
      o.status === 'UNEXPECTED'
        ? `FAIL: ${o.name} differs and is not listed:\n--- claude code\n${o.cc}\n--- durable-agent\n${o.da}`
        : `FAIL: ${o.name} was listed as an intended difference but now matches: ${INTENDED[o.name]}`,
    );
  return bad.length === 0;
}

async function main(): Promise<void> {
  const started = Date.now();
  const only = process.env.PARITY_ONLY ? new RegExp(process.env.PARITY_ONLY) : undefined;
  const scenarios = SCENARIOS.filter((s) => !only || only.test(s.name));
  const names = new Set(SCENARIOS.map((s) => s.name));
  for (const listed of [...Object.keys(INTENDED), ...Object.keys(KNOWN_GAPS), ...Object.keys(ONE_SIDED)])
    if (!names.has(listed)) throw new Error(`expectations.ts lists ${listed}, which is no scenario`);
  const claude =
    process.env.PARITY_CLAUDE ||
    execFileSync('bash', [path.join(root, 'scripts/install-claude-code.sh')], { encoding: 'utf8' }).trim();
  console.log(`claude: ${claude} (${execFileSync(claude, ['--version'], { encoding: 'utf8' }).trim()})`);

  const runDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'parity-')));
  const servers = new Map<string, ScriptedModelServer>();
  const router = await startRouter(servers);
  const listener = await startListener();
  const env = await startTemporal();
  const taskQueue = `parity-${process.pid}`;
  const daHome = path.join(runDir, 'da-home');
  fs.mkdirSync(daHome);
  const worker = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: router.url, home: daHome });
  let ok = false;
  try {
    const ctx: Context = {
      claude,
      runDir,
      servers,
      routerUrl: router.url,
      temporalAddress: env.address,
      taskQueue,
      daHome,
      port: (listener.address() as AddressInfo).port,
    };
    const size = Number(process.env.PARITY_CONCURRENCY ?? 3);
    const outcomes = await pool(scenarios, size, async (scenario) => {
      const outcome = await runScenario(ctx, scenario);
      process.stderr.write(`${outcome.same ? '=' : '≠'} ${scenario.name}\n`);
      return outcome;
    });
    if (process.env.PARITY_REPORT) fs.writeFileSync(process.env.PARITY_REPORT, JSON.stringify(outcomes, null, 2));
    ok = report(outcomes, (Date.now() - started) / 1000);
  } finally {
    await worker.kill('SIGTERM');
    await env.teardown();
    await router.close();
    listener.close();
    if (ok) fs.rmSync(runDir, { recursive: true, force: true });
    else console.log(`workspaces and homes kept in ${runDir}`);
  }
  process.exit(ok ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
