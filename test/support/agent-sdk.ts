/**
 * The Claude Agent SDK, pinned, installed from npm on first use into `.tools/agent-sdk/<version>`
 * (git-ignored), without its optional dependency, the bundled Claude Code binary (400 MB): the
 * tests point the SDK at durable-agent instead.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const AGENT_SDK_VERSION = '0.3.337';

/** The SDK's module (`sdk.mjs`), installed if need be. */
export function agentSdkModule(): string {
  const root = path.join(__dirname, '..', '..', '.tools', 'agent-sdk', AGENT_SDK_VERSION);
  const module = path.join(root, 'node_modules', '@anthropic-ai', 'claude-agent-sdk', 'sdk.mjs');
  if (fs.existsSync(module)) return module;
  // Installed beside, then renamed into place: two runs never see half an install.
  const temp = `${root}.${process.pid}.tmp`;
  fs.mkdirSync(temp, { recursive: true });
  fs.writeFileSync(path.join(temp, 'package.json'), '{"private":true}\n');
  execFileSync(
    'npm',
    ['install', '--omit=optional', '--no-audit', '--no-fund', `@anthropic-ai/claude-agent-sdk@${AGENT_SDK_VERSION}`],
    { cwd: temp, stdio: 'pipe' },
  );
  try {
    fs.renameSync(temp, root);
  } catch {
    fs.rmSync(temp, { recursive: true, force: true }); // another run installed it first
  }
  return module;
}
