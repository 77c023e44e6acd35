import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The fixed tree the golden tests run against. Files are listed oldest first and get mtimes one
 * minute apart from a fixed instant, so "newest first" orderings are the same on every machine.
 */
export const FIXTURE: [string, string | Buffer][] = [
  ['README.md', '# Demo project\n\nA tiny fixture used by the golden tests.\n'],
  ['package.json', '{\n  "name": "demo",\n  "version": "1.0.0",\n  "main": "src/index.ts"\n}\n'],
  [
    'src/index.ts',
    [
      "import { add, square } from './util/math';",
      "import { shout } from './util/strings';",
      '',
      '/** Entry point. */',
      'export function main(args: string[]): number {',
      '  // TODO: parse flags',
      '  const total = args.map(Number).reduce(add, 0);',
      '  console.log(shout(`total: ${total}`));',
      '  return square(total);',
      '}',
      '',
      'export function helper(): string {',
      "  return 'helper';",
      '}',
      '',
      'export function unused(): void {',
      '  // TODO: remove',
      '}',
      '',
    ].join('\n'),
  ],
  [
    'src/util/math.ts',
    'export const add = (a: number, b: number): number => a + b;\nexport const square = (x: number): number => x * x;\n',
  ],
  ['src/util/strings.ts', "export function shout(text: string): string {\n  return text.toUpperCase() + '!';\n}\n"],
  ['src/legacy.js', "var helper = require('./helper');\nmodule.exports = function () { return helper(); };\n"],
  ['docs/guide.md', '# Guide\n\nRun `main` with numbers.\nTODO: document flags.\n'],
  ['docs/empty.md', ''],
  ['data/win.txt', 'alpha\r\nbeta\r\ngamma\r\n'],
  ['data/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00])],
  ['data/wide.txt', `${'0123456789'.repeat(210)}\nshort\n`],
  ['.gitignore', 'dist/\n*.log\n'],
  ['dist/bundle.js', 'console.log("TODO built");\n'],
  ['debug.log', 'TODO in a log\n'],
  ['.github/workflows/ci.yml', 'name: ci\non: push\n# TODO: cache\n'],
];

/** 2023-11-14T22:13:20Z: any fixed instant will do. */
export const FIXTURE_EPOCH_SECONDS = 1_700_000_000;

/** Write the fixture into `workspace` with its fixed mtimes. */
export function writeFixture(workspace: string): void {
  for (const [i, [file, content]] of FIXTURE.entries()) {
    const full = path.join(workspace, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
    const time = FIXTURE_EPOCH_SECONDS + i * 60;
    utimesSync(full, time, time);
  }
}
