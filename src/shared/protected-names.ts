/**
 * Workspace entries that make something run later, outside any sandbox, when a person or a tool
 * opens the repository: editor tasks, shell start-up files, MCP servers, agent settings with their
 * hooks, commands, agents and skills (including this job's own sandbox settings), git's own
 * config. `.durable-agent` holds the tool journal the worker trusts on retries. The same names for
 * every tool: the sandbox keeps them read-only for Bash, and acceptEdits asks before Edit or Write
 * changes them (except `.claude/commands`, `agents` and `skills`, which acceptEdits edits as
 * Claude Code does, and the sandbox still keeps from Bash). Pure: the workflow bundle imports it.
 */
export const WORKSPACE_PROTECTED_PATHS: readonly string[] = [
  '.gitconfig',
  '.gitmodules',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.ripgreprc',
  '.mcp.json',
  '.vscode',
  '.idea',
  '.claude',
  '.durable-agent',
];
