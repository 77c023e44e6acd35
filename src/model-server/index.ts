/**
 * A local HTTP server that speaks the Anthropic Messages API from a script, for tests and the
 * demo. Point the real SDK at it: `new Anthropic({ apiKey: 'test', baseURL: server.url })`.
 *
 * @example
 * const server = await ScriptedModelServer.start({ replies: [{ content: [{ type: 'text', text: 'hi' }] }] });
 * try { ... } finally { await server.close(); }
 */
export { ScriptedModelServer, type ScriptedModelServerOptions } from './server';
export { loadScriptedSession, parseScriptedSession } from './script';
export { estimateInputTokens } from './prompt-tokens';
export type {
  CompactionTarget,
  Fault,
  FaultTarget,
  RecordedRequest,
  RequestKind,
  ScheduledCompactionFault,
  ScheduledFault,
  ScriptedCompactions,
  ScriptedBlock,
  ScriptedRedactedThinkingBlock,
  ScriptedRefusalDetails,
  ScriptedReply,
  ScriptedSession,
  ScriptedStopReason,
  ScriptedThinkingBlock,
  ScriptedToolUseBlock,
  ScriptedUsage,
} from './types';
