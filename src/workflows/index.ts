export { agentSession } from './agent-session';
export { agentBatch } from './batch';
