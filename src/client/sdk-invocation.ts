/**
 * Whether `args` (after the program name) are the Agent SDK's: no subcommand, stream-json in. Kept
 * apart from the bridge so that every other command's start-up does not load it.
 */
export function isSdkInvocation(args: readonly string[]): boolean {
  return (
    args.length > 0 &&
    args[0]!.startsWith('--') &&
    args.some((arg) => arg === '--input-format' || arg.startsWith('--input-format='))
  );
}
