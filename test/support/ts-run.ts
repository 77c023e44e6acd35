import path from 'node:path';

/** The preload that runs the project's TypeScript in a process a test starts (`ts-register.js`). */
export const TS_REGISTER = path.join(__dirname, 'ts-register.js');

/** Node's arguments before a `.ts` entry point: `spawn(process.execPath, [...TS_NODE_ARGS, file])`. */
export const TS_NODE_ARGS: readonly string[] = ['-r', TS_REGISTER];
