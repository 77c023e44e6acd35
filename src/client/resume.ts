import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import { TranscriptStore } from '../activities/store/transcript-store';
import { MAX_INLINE_RESUME_CHARS } from '../shared/session';
import type { ResumeFrom, SessionInput } from '../shared/session';
import { parseSessionJsonl, SessionFileError } from '../shared/session-jsonl';
import { emptyTranscript } from '../shared/transcript';
import { temporalTargetFromEnv } from './config';
import { openContentStore } from './store-config';
import { connect } from './connect';
import { finishedJob } from './finished-job';

/** `run`'s flags that continue a conversation. */
export interface ResumeFlags {
  resume?: string;
  resumeFrom?: string;
  jobId?: string;
  model?: string;
}

/** Which of `run`'s options the user gave, rather than left at their defaults. */
export interface GivenOptions {
  cwd: boolean;
}

/**
 * The input of a `run --resume <id>` or `run --resume-from FILE`: the new job's own input, plus
 * the conversation it continues. `--resume` keeps the finished job's workspace and model unless
 * `--cwd` or `--model` is given (as Claude Code's `--resume` continues in the same project);
 * what was chosen is said on stderr. Without either flag the input is returned as it is.
 */
export async function withResume(
  input: SessionInput,
  flags: ResumeFlags,
  given: GivenOptions,
  env: NodeJS.ProcessEnv = process.env,
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<SessionInput> {
  if (flags.resume !== undefined && flags.resumeFrom !== undefined) {
    throw new InvalidArgumentError('Give --resume <id> or --resume-from FILE, not both.');
  }
  if (flags.resume !== undefined) return resumeJob(input, flags.resume, flags, given, env, say);
  if (flags.resumeFrom !== undefined) return resumeFile(input, flags.resumeFrom, env, say);
  return input;
}

async function resumeJob(
  input: SessionInput,
  id: string,
  flags: ResumeFlags,
  given: GivenOptions,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<SessionInput> {
  if (flags.jobId === id) {
    throw new InvalidArgumentError(
      `--job-id ${id} is the job being resumed: the continuation is a new job, so give it another id (or none).`,
    );
  }
  const connected = await connect({ withWorker: false, env });
  try {
    const job = await finishedJob(connected.client, id, 'resume');
    const head = job.terminal.transcriptHead;
    if (!head) {
      throw new InvalidArgumentError(
        `job ${id} has no conversation to resume: it ended ${job.terminal.reason} before its first model call; ` +
          'start a new job instead.',
      );
    }
    const workspace = given.cwd || !job.input.workspace ? input.workspace : job.input.workspace;
    const model = flags.model !== undefined || !job.input.model ? input.model : job.input.model;
    say(
      `resuming job ${id} (${job.terminal.reason}, ${job.terminal.messageCount} messages) in ${workspace}` +
        `${given.cwd ? '' : ' (its workspace; --cwd to change)'} with ${model}` +
        `${flags.model !== undefined ? '' : ' (its model; --model to change)'}`,
    );
    const resumeFrom: ResumeFrom = {
      source: `job ${id}`,
      transcript: { head, messageCount: job.terminal.messageCount },
    };
    return { ...input, workspace, model, resumeFrom };
  } finally {
    await connected.connection.close();
  }
}

async function resumeFile(
  input: SessionInput,
  file: string,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<SessionInput> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`--resume-from ${file} cannot be read: ${(error as Error).message}`);
  }
  let parsed: ReturnType<typeof parseSessionJsonl>;
  try {
    parsed = parseSessionJsonl(text, file);
  } catch (error) {
    if (error instanceof SessionFileError) throw new InvalidArgumentError(error.message);
    throw error;
  }
  const source = `file ${path.basename(file)}`;
  const chars = JSON.stringify(parsed.messages).length;
  let resumeFrom: ResumeFrom;
  const cluster = temporalTargetFromEnv(env) !== undefined;
  if (cluster && chars <= MAX_INLINE_RESUME_CHARS) {
    resumeFrom = { source, messages: parsed.messages };
  } else {
    // The embedded server's workers use this machine's store; a cluster's must share it.
    const store = await openContentStore(env);
    const transcript = await new TranscriptStore(store).append(emptyTranscript(), parsed.messages);
    if (cluster) {
      say(
        `· the conversation is ${Math.round(chars / 1024)} KiB, over the ${MAX_INLINE_RESUME_CHARS / 1024} KiB that ` +
          `travel in a job's input: it was written to ${store.location}, which the workers must share`,
      );
    }
    resumeFrom = { source, transcript };
  }
  say(
    `continuing the conversation of ${file} (${parsed.messages.length} messages` +
      `${parsed.notes.length ? `; ${parsed.notes.join('; ')}` : ''}) in ${input.workspace}`,
  );
  return { ...input, resumeFrom };
}
