import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { isListening } from '../../src/client/free-port';

const root = path.join(__dirname, '..', '..');
// As the store itself does: the SDK's notice about its Node 20 support is noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** A SeaweedFS server with its S3 gateway, started by a test, on loopback ports of its own. */
export interface S3Server {
  /** `http://127.0.0.1:<port>`: the S3 gateway. */
  endpoint: string;
  /** A bucket made at start. */
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The environment a process needs to use `s3://<bucket>[/prefix]` as its content store. */
  env(prefix?: string): NodeJS.ProcessEnv;
  /** An S3 client with the server's credentials, for a test's own looks into the bucket. */
  client: S3Client;
  createBucket(name: string): Promise<void>;
  /** Everything the server printed so far. */
  logs(): string;
  /** Stop the server (only the process this started) and remove its folder. */
  stop(): Promise<void>;
}

/** The `weed` binary: `SEAWEEDFS_WEED_PATH`, else what scripts/install-seaweedfs.sh finds or builds. */
export function weedBinary(): string {
  const given = process.env.SEAWEEDFS_WEED_PATH?.trim();
  if (given) return given;
  const recorded = path.join(root, '.tools', 'weed-path');
  if (fs.existsSync(recorded)) {
    const file = fs.readFileSync(recorded, 'utf8').trim();
    if (file && fs.existsSync(file)) return file;
  }
  return execFileSync('bash', [path.join(root, 'scripts', 'install-seaweedfs.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/**
 * Start `weed server` (master, volume server, filer and S3 gateway in one process) in a temporary
 * folder, on free loopback ports, with an identity whose access key and secret the gateway checks
 * (so wrong credentials are refused as S3 refuses them), no bucket made on upload, and no
 * telemetry. Resolves once the gateway answers and `bucket` exists.
 */
export async function startS3Server(options: { bucket?: string; startTimeoutMs?: number } = {}): Promise<S3Server> {
  // Another process may still bind one of the ports between picking and weed's listen: try again
  // on fresh ports then, a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startS3ServerOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/address already in use/.test((error as Error).message)) throw error;
    }
  }
}

async function startS3ServerOnce(options: { bucket?: string; startTimeoutMs?: number }): Promise<S3Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-s3-'));
  const accessKeyId = `test${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(18).toString('hex');
  const bucket = options.bucket ?? 'agent-store';
  fs.writeFileSync(
    path.join(dir, 's3.json'),
    JSON.stringify({
      identities: [
        {
          name: 'durable-agent-test',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
  );
  fs.mkdirSync(path.join(dir, 'data'));
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = (await distinctFreePorts(8)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const args = [
    'server',
    `-dir=${path.join(dir, 'data')}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    '-master.telemetry=false',
    '-master.volumeSizeLimitMB=64',
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    '-filer',
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    // Inside `dir`, so they go with it.
    `-filer.localSocket=${path.join(dir, 'filer.sock')}`,
    '-s3',
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.config=${path.join(dir, 's3.json')}`,
    `-s3.localSocket=${path.join(dir, 's3.sock')}`,
    '-s3.autoCreateBucket=false',
  ];
  const child = spawn(weedBinary(), args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = `http://127.0.0.1:${s3}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
  const grpcPorts = [masterGrpc, volumeGrpc, filerGrpc, s3Grpc];
  const stop = async () => {
    client.destroy();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    // `weed server` names a socket in /tmp after each of its gRPC ports.
    for (const name of ['master', 'volume', 'filer', 's3']) {
      for (const port of grpcPorts) fs.rmSync(`/tmp/seaweedfs-${name}-grpc-${port}.sock`, { force: true });
    }
  };
  const createBucket = async (name: string) => {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  };
  try {
    await untilReady(
      child,
      () => output,
      s3,
      options.startTimeoutMs ?? 60_000,
      () =>
        createBucket(bucket).then(
          () => true,
          (error: unknown) => {
            // An earlier try that timed out on the client may have made it.
            if ((error as Error).name === 'BucketAlreadyOwnedByYou') return true;
            throw error;
          },
        ),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    env: (prefix?: string) => ({
      DURABLE_AGENT_STORE: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
      AWS_REGION: 'us-east-1',
      // Nothing here may look for credentials on the network (an instance's metadata service).
      AWS_EC2_METADATA_DISABLED: 'true',
    }),
    client,
    createBucket,
    logs: () => output,
    stop,
  };
}

/**
 * Wait until the S3 port accepts connections and `ready` succeeds (the gateway answers S3
 * requests only once the filer behind it is up, a few seconds after the port opens).
 */
async function untilReady(
  child: ChildProcess,
  output: () => string,
  port: number,
  timeoutMs: number,
  ready: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `weed server exited (${child.exitCode ?? child.signalCode}) before its S3 gateway answered:\n${output()}`,
      );
    }
    if (await isListening(port)) {
      try {
        if (await ready()) return;
      } catch (error) {
        last = error;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `weed server's S3 gateway did not answer within ${timeoutMs / 1000} s (last error: ${String(last)}):\n${output().slice(-4_000)}`,
  );
}

/**
 * `count` free loopback ports, all different, below the kernel's ephemeral range (32768 and up on
 * Linux): a port from that range, free when picked, can be taken as the source port of an outgoing
 * connection (weed's own, to its master) before weed binds it. CI failed once that way.
 */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) {
    const port = 15_000 + Math.floor(Math.random() * 17_000);
    if (!ports.has(port) && (await canListen(port))) ports.add(port);
  }
  return [...ports];
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
