// An app built on the Claude Agent SDK, as a user writes one: it runs query() with the options its
// one argument (JSON) gives and prints every message it receives as a JSON line. `canUseTool`
// answers 'allow' or 'deny' as `answer` says, and each question is printed as {"canUseTool": ...}.
const config = JSON.parse(process.argv[2]);
const { query } = await import(config.sdk);
const options = {
  cwd: config.cwd,
  pathToClaudeCodeExecutable: config.executable,
  env: config.env,
  ...(config.maxTurns ? { maxTurns: config.maxTurns } : {}),
  ...(config.permissionMode ? { permissionMode: config.permissionMode } : {}),
  ...(config.extraArgs ? { extraArgs: config.extraArgs } : {}),
  ...(config.resume ? { resume: config.resume } : {}),
  ...(config.hook
    ? { hooks: { PreToolUse: [{ hooks: [async () => ({ decision: 'block', reason: 'blocked by the app' })] }] } }
    : {}),
  ...(config.answer
    ? {
        canUseTool: async (toolName, input) => {
          console.log(JSON.stringify({ canUseTool: toolName, input }));
          return config.answer === 'allow'
            ? { behavior: 'allow', updatedInput: input }
            : { behavior: 'deny', message: 'Not in this repository.' };
        },
      }
    : {}),
};
try {
  for await (const message of query({ prompt: config.prompt, options })) console.log(JSON.stringify(message));
} catch (error) {
  console.log(JSON.stringify({ error: String(error?.message ?? error) }));
  process.exitCode = 1;
}
