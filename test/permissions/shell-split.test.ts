import { isReadOnlyBashCommand, splitShellCommand } from '../../src/shared/shell';
import { disagreements } from './parser-agreement';

const texts = (command: string) => {
  const split = splitShellCommand(command);
  if (!split.ok) throw new Error(`unexpected failure: ${split.detail}`);
  return split.commands.map((sub) => sub.text);
};

const SPLITS: Array<[string, string[]]> = [
  ['npm test', ['npm test']],
  ['  npm   test  ', ['npm test']],
  ['a && b || c ; d | e |& f & g', ['a', 'b', 'c', 'd', 'e', 'f', 'g']],
  ['a\nb\n\nc', ['a', 'b', 'c']],
  ['a &&\n  b', ['a', 'b']],
  ['a;', ['a']],
  ['a &', ['a']],
  ['echo "a && b; c | d"', ['echo "a && b; c | d"']],
  ["echo 'a && b'", ["echo 'a && b'"]],
  ['echo a\\;b', ['echo a\\;b']],
  ['npm test # && rm -rf /', ['npm test']],
  ['echo a#b', ['echo a#b']],
  ['npm test 2>&1 | tee log', ['npm test 2>&1', 'tee log']],
  ['echo $HOME ${USER} "$PATH"', ['echo $HOME ${USER} "$PATH"']],
  ["echo $'a\\'b' done", ["echo $'a\\'b' done"]],
  ['npm test \\\n  --ci', ['npm test --ci']],
];

const WRITES: Array<[string, string[]]> = [
  ['echo >&2 hi', []],
  ['echo hi >&file', ['file']],
  ['cat <> rw.txt', ['rw.txt']],
  ['echo hi >| clobber.txt', ['clobber.txt']],
  ['echo hi > "/dev/null"', ['/dev/null']], // quoted: not recognised as harmless, so treated as a file
  ['cat <<< "text"', []],
];

const UNSPLITTABLE: Array<[string, string]> = [
  ['echo $(rm x)', 'substitution'],
  ['echo "$(rm x)"', 'substitution'],
  ['echo `rm x`', 'substitution'],
  ['echo "`rm x`"', 'substitution'],
  ['diff <(ls a) <(ls b)', 'substitution'],
  ['tee >(sh)', 'substitution'],
  ['echo ${x:-$(rm y)}', 'substitution'],
  ['echo $((1 + 2))', 'substitution'],
  ['(cd x && rm y)', 'unsupported'],
  ['{ rm x; }', 'unsupported'],
  ['if true; then rm x; fi', 'unsupported'],
  ['for f in *; do rm $f; done', 'unsupported'],
  ['while true; do :; done', 'unsupported'],
  ['! rm x', 'unsupported'],
  ['f() { rm x; }', 'unsupported'],
  ['cat <<EOF\nhi\nEOF', 'unsupported'],
  ['case x in a) rm y;; esac', 'unsupported'],
  ['echo "unterminated', 'unsupported'],
  ["echo 'unterminated", 'unsupported'],
  ['echo a\\', 'unsupported'],
  ['a &&', 'unsupported'],
  ['a | | b', 'unsupported'],
  ['&& a', 'unsupported'],
  ['; a', 'unsupported'],
  ['echo >', 'unsupported'],
  ['> out.txt', 'unsupported'],
  ['', 'unsupported'],
  ['   \n  ', 'unsupported'],
  ['# only a comment', 'unsupported'],
];

/** More commands both readers accept, at the edges of the grammar. */
const EDGES: string[] = [
  'echo a#b #c',
  'echo \\#x',
  "echo x'#'y",
  'echo ${x#y} ${x:-a b} ${a:-${b}}c',
  'echo $"x y" "a\\"b" a\\\nb',
  'ls 2>/dev/null; ls 2> /dev/null; ls 10>x; ls -l>x',
  'a=1 b=2 cmd; a=1; a="x y" cmd; a+=1 cmd; a[1]=2 cmd',
  "a='x;y' cmd a=b =x 1a=b",
  'echo {a,b} ~/x ~ *.ts [a] a]',
  'echo a&&b||c|d;e&f',
  'echo a>&2 a<&0 >&- &>/dev/null &>>log',
  'cat<in; echo a>b<c',
  'echo $$ $? $! $@ $* $# $- $0 $1 $ "$" a$ $%',
  'echo then if; x if',
  'time ls; time -p ls; time',
  '[ a ]; test a; echo ]] { }',
  'echo a\tb\necho\ta',
  'ls > "$f"; ls > $f; ls >a\\ b',
  'A=1 >x cmd; echo x >x y; echo x1>x; echo x 1 >x',
  'cmd --opt=val "--opt=$x"',
  "echo $'\\x41' $'\\'' \"a\"'b'c \"\" '' x\"\"",
  'a\n\n;b',
  'a &&\n\nb',
  'a ||\n# c\nb',
  'echo ${#x} ${x[0]} ${x[@]} ${!x[@]} "${x[@]}" ${x/a/b}',
  'ls >> x 2>&1; ls &> x; ls >& x; ls 3<&-; ls|&cat',
  'x=$y; x=$y cmd; x=${y} cmd; x=a\\ b cmd',
  'echo \\( "(" \'(\' a\\)b \\; \\& \\| \\< \\>',
  'echo ~root/x ~+ ~- x~ a=~; x=~/a cmd',
  'echo x;#y\necho x|#y\ncat',
];

describe('splitShellCommand', () => {
  it.each(SPLITS)('%j → %j', (command, expected) => {
    expect(texts(command)).toEqual(expected);
  });

  it('separates redirections from words and lists the files they write', () => {
    const split = splitShellCommand('cmd a >out.txt 2>> err.log < in.txt 2>&1 > /dev/null &>all.log b');
    expect(split.ok).toBe(true);
    if (!split.ok) return;
    const [sub] = split.commands;
    expect(sub?.tokens.map((token) => token.value)).toEqual(['cmd', 'a', 'b']);
    expect(sub?.fileWrites).toEqual(['out.txt', 'err.log', 'all.log']);
    expect(sub?.text).toBe('cmd a >out.txt 2>> err.log < in.txt 2>&1 > /dev/null &>all.log b');
    expect(sub?.textWithoutRedirects).toBe('cmd a b');
  });

  it.each(WRITES)('%j writes %j', (command, writes) => {
    const split = splitShellCommand(command);
    expect(split.ok && split.commands[0]?.fileWrites).toEqual(writes);
  });

  it('removes quotes in token values and keeps the source text', () => {
    const split = splitShellCommand(`git commit -m "fix: a \\"b\\"" 'c d'`);
    expect(split.ok && split.commands[0]?.tokens).toEqual([
      { raw: 'git', value: 'git' },
      { raw: 'commit', value: 'commit' },
      { raw: '-m', value: '-m' },
      { raw: '"fix: a \\"b\\""', value: 'fix: a "b"' },
      { raw: "'c d'", value: 'c d' },
    ]);
  });

  it('keeps the whole line with its operators for exact rules', () => {
    const split = splitShellCommand('npm test   &&   npm run lint # check');
    expect(split.ok && split.text).toBe('npm test && npm run lint');
  });

  it.each(UNSPLITTABLE)('%j cannot be split (%s)', (command, problem) => {
    const split = splitShellCommand(command);
    expect(split).toMatchObject({ ok: false, problem });
  });
});

describe('isReadOnlyBashCommand is unchanged by the new helpers', () => {
  it.each([
    ['ls; pwd', true],
    ['git status || true', true],
    ['ls # a comment; rm -rf /', true],
    ['echo $HOME', false],
    ['cat < file', false],
    ['npm test', false],
  ])('%j → %s', (command, expected) => {
    expect(isReadOnlyBashCommand(command)).toBe(expected);
  });
});

describe('splitShellCommand and parseShell agree', () => {
  it('find the same simple commands wherever both read a command', () => {
    const inputs = [
      ...SPLITS.map(([command]) => command),
      ...WRITES.map(([command]) => command),
      ...UNSPLITTABLE.map(([command]) => command),
      'cmd a >out.txt 2>> err.log < in.txt 2>&1 > /dev/null &>all.log b',
      `git commit -m "fix: a \\"b\\"" 'c d'`,
      'npm test   &&   npm run lint # check',
      ...EDGES,
    ];
    const { compared, differ } = disagreements(inputs);
    expect(differ).toEqual([]);
    expect(compared).toBeGreaterThanOrEqual(SPLITS.length + WRITES.length + EDGES.length);
  });
});
