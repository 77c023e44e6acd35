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
  ) {
    this.address = `127.0.0.1:${port}`;
  }

  /** A dev server on a free port with its database in `dir`. */
  static async start(dir: string): Promise<DevServer> {
    const server = new DevServer(path.join(dir, 'temporal.db'), await freePort(), path.join(dir, 'temporal.log'));
    try {
      await server.launch();
    } catch (error) {
      await server.kill();
      throw error;
    }
    return server;
  }

  /** Start the server process on the database and port it had, and wait until it answers. */
  async launch(): Promise<void> {
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
      ],
      // Its own process group, so a kill reaches it and nothing else.
      { detached: true, stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 60_000;
    while (!(await isListening(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`the Temporal dev server did not start; see ${this.logFile}:\n${tail(this.logFile)}`);
      }
      await sleep(100);
    }
    // Listening comes before the namespace is served.
    const connection = await Connection.connect({ address: this.address });
    try {
      for (;;) {
        try {
          await connection.workflowService.describeNamespace({ namespace: 'default' });
          return;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await sleep(200);
        }
      }
    } finally {
      await connection.close();
    }
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

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-2_000);
  } catch {
    return '';
  }
}
