// One runTool attempt in a process of its own, so a test can run it where the workspace is
// mounted read-only (under bwrap). Prints {result, block} as JSON; a failed attempt exits 1.
import { runToolAttempt } from './tool-activity';

async function main(): Promise<void> {
  const calls = JSON.parse(process.argv[2] ?? '[]') as Array<Parameters<typeof runToolAttempt>[0]>;
  const answers = [];
  for (const call of calls) {
    const { result, block } = await runToolAttempt(call);
    answers.push({ result, block });
  }
  process.stdout.write(JSON.stringify(answers));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
