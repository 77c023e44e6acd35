// An app built on the Claude Agent SDK, as a user writes one: it runs query() with the options its
// one argument (JSON) gives and prints every message it receives as a JSON line. `canUseTool`
// answers 'allow', 'deny' or 'change' (allow with other content) as `answer` says, and each question is printed as {"canUseTool": ...}.
// With `messages` instead of `prompt`, the prompt is streaming input: each message is sent once
// the one before has its result, and the input ends after the last; `afterFirst` changes the
// permission mode and the model before the second.
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
  // A hook callback on `hook` (an event name) that prints what it got and, before a tool call,
  // blocks it with a reason.
  ...(config.hook
    ? {
        hooks: {
          [config.hook]: [
            {
              hooks: [
                async (input) => {
                  console.log(JSON.stringify({ hook: input.hook_event_name, input }));
                  return input.hook_event_name === 'PreToolUse'
                    ? { decision: 'block', reason: 'blocked by the app' }
                    : {};
                },
              ],
            },
          ],
        },
      }
    : {}),
  ...(config.answer
    ? {
        canUseTool: async (toolName, input) => {
          console.log(
            JSON.stringify({ canUseTool: toolName, input: JSON.stringify(input).length > 2_000 ? '(large)' : input }),
          );
          // The input it got printed in full would flood the output: its size stands in for it.
          if (JSON.stringify(input).length > 2_000)
            console.log(JSON.stringify({ largeInput: toolName, chars: JSON.stringify(input).length }));
          if (config.answer === 'change')
            return { behavior: 'allow', updatedInput: { ...input, content: 'changed by the app\n' } };
          return config.answer === 'allow'
            ? { behavior: 'allow', updatedInput: input }
            : { behavior: 'deny', message: 'Not in this repository.' };
        },
      }
    : {}),
};
let results = 0;
let resultCame = () => {};
let q;
async function* streamed() {
  for (const [i, text] of config.messages.entries()) {
    while (results < i) await new Promise((resolve) => (resultCame = resolve));
    // `afterFirst`: what the app changes between its first and second message.
    if (i === 1 && config.afterFirst?.permissionMode) await q.setPermissionMode(config.afterFirst.permissionMode);
    if (i === 1 && config.afterFirst?.model) await q.setModel(config.afterFirst.model);
    yield { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' };
  }
}
try {
  q = query({ prompt: config.messages ? streamed() : config.prompt, options });
  for await (const message of q) {
    console.log(JSON.stringify(message));
    // `interruptOnTool`: interrupt the query a moment after the model asked for a tool.
    if (
      config.interruptOnTool &&
      message.type === 'assistant' &&
      message.message.content.some((b) => b.type === 'tool_use')
    )
      setTimeout(
        () => void q.interrupt().catch((error) => console.log(JSON.stringify({ interruptError: String(error) }))),
        1_500,
      );
    if (message.type === 'result') {
      results++;
      resultCame();
    }
  }
} catch (error) {
  console.log(JSON.stringify({ error: String(error?.message ?? error) }));
  process.exitCode = 1;
}
