/**
 * A Temporal dev server of the chaos harness's own, to SIGKILL and start again on the same database
 * and port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort, isListening } from '../../../src/client/free-port';
import { findTemporalBinary } from '../../../src/client/temporal-binary';
import { sleep } from './sleep';

export class DevServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  readonly address: string;

  private constructor(
    readonly dbFile: string,
    readonly port: number,
    private readonly logFile: string,
    private readonly options: DevServerOptions,
    /** Where the server's Prometheus metrics are served, when asked for. */
    readonly metricsPort: number | undefined,
  ) {
    this.address = `127.0.0.1:${port}`;
  }

  /**
   * A dev server on a free port with its database in `dir`. A port free a moment ago can be taken
   * before the server binds it (by another test's server, whose metrics and HTTP ports are random):
   * the server then exits at once, and a new port is tried.
   */
  static async start(dir: string, options: DevServerOptions = {}): Promise<DevServer> {
    for (let attempt = 1; ; attempt++) {
      const server = new DevServer(
        path.join(dir, 'temporal.db'),
        await freePort(),
        path.join(dir, 'temporal.log'),
        options,
        options.metrics ? await freePort() : undefined,
      );
      try {
        await server.launch();
        return server;
      } catch (error) {
        await server.kill();
        if (!(error instanceof PortTakenError) || attempt === 3) throw error;
      }
    }
  }

  /**
   * Start the server process on the database and port it had, and wait until it serves the
   * namespace. After a kill, the port may be held for a moment by another process: then it is
   * tried again until the deadline, since the workers know only this address.
   */
  async launch(deadline = Date.now() + 60_000): Promise<void> {
    for (;;) {
      try {
        await this.launchOnce(deadline);
        return;
      } catch (error) {
        if (!(error instanceof PortTakenError) || this.firstLaunch || Date.now() > deadline) throw error;
        await sleep(500);
      }
    }
  }

  private firstLaunch = true;

  private async launchOnce(deadline: number): Promise<void> {
    const logStart = fileSize(this.logFile);
    const log = fs.openSync(this.logFile, 'a');
    const child = spawn(
      findTemporalBinary(),
      [
        'server',
        'start-dev',
        '--db-filename',
        this.dbFile,
        '--ip',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--headless',
        '--log-level',
        'error',
        // Pacing only: the dev server's transfer queue allows 20 workflow tasks a second by default,
        // which would make 50 concurrent jobs wait on each other rather than on the faults.
        '--dynamic-config-value',
        'history.transferProcessorMaxPollRPS=1000',
        ...(this.options.namespaces ?? []).flatMap((namespace) => ['--namespace', namespace]),
        ...(this.metricsPort === undefined ? [] : ['--metrics-port', String(this.metricsPort)]),
      ],
      // Its own process group, so a kill reaches it and nothing else.
      { detached: true, stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const failed = (what: string) => {
      const output = tail(this.logFile, logStart);
      return child.exitCode !== null && /address already in use/.test(output)
        ? new PortTakenError(`port ${this.port} was taken before the dev server bound it:\n${output}`)
        : new Error(`the Temporal dev server ${what}; see ${this.logFile}:\n${output}`);
    };
    // Something listening on the port is not proof enough: it may be another process, with ours
    // exiting because it could not bind. So the namespace must answer while our process lives.
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw failed(`exited (${child.exitCode ?? child.signalCode})`);
      if (Date.now() > deadline) throw failed('did not serve the namespace within 60 s');
      if (await isListening(this.port)) {
        try {
          const connection = await Connection.connect({ address: this.address, connectTimeout: 2_000 });
          try {
            await connection.workflowService.describeNamespace({ namespace: 'default' });
          } finally {
            await connection.close();
          }
          if (child.exitCode === null && child.signalCode === null) break;
        } catch {
          // Listening comes before the namespace is served; or the listener is not ours.
        }
      }
      await sleep(200);
    }
    this.firstLaunch = false;
  }

  /**
   * The server's `action` counters (what Temporal Cloud bills) summed by namespace, then by
   * action type. They count from the server's start: a restart sets them back to zero.
   */
  async actions(): Promise<Map<string, Map<string, number>>> {
    if (this.metricsPort === undefined) throw new Error('this dev server was started without metrics');
    const text = await (await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`)).text();
    const byNamespace = new Map<string, Map<string, number>>();
    for (const line of text.split('\n')) {
      const match = /^action\{(.*)\} (\S+)$/.exec(line);
      if (!match) continue;
      const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      const namespace = byNamespace.get(labels.namespace ?? '') ?? new Map<string, number>();
      byNamespace.set(labels.namespace ?? '', namespace);
      const type = labels.action_type ?? '';
      namespace.set(type, (namespace.get(type) ?? 0) + Number(match[2]));
    }
    return byNamespace;
  }

  /** SIGKILL the server (its process group) and wait until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await this.exited;
  }
}

export interface DevServerOptions {
  /** Namespaces to create beside `default`. */
  namespaces?: string[];
  /** Serve Prometheus metrics on a free port of their own (see `actions()`). */
  metrics?: boolean;
}

/** The server could not bind its port: another process took it after it was found free. */
class PortTakenError extends Error {}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** The end of what `file` gained after byte `from`. */
function tail(file: string, from = 0): string {
  try {
    return fs.readFileSync(file).subarray(from).toString('utf8').slice(-2_000);
  } catch {
    return '';
  }
}
