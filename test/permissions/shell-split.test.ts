import { isReadOnlyBashCommand, splitShellCommand } from '../../src/shared/tools/bash-classify';

const texts = (command: string) => {
  const split = splitShellCommand(command);
  if (!split.ok) throw new Error(`unexpected failure: ${split.detail}`);
  return split.commands.map((sub) => sub.text);
};

describe('splitShellCommand', () => {
  it.each([
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
  ])('%j → %j', (command, expected) => {
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

  it.each([
    ['echo >&2 hi', []],
    ['echo hi >&file', ['file']],
    ['cat <> rw.txt', ['rw.txt']],
    ['echo hi >| clobber.txt', ['clobber.txt']],
    ['echo hi > "/dev/null"', ['/dev/null']], // quoted: not recognised as harmless, so treated as a file
    ['cat <<< "text"', []],
  ])('%j writes %j', (command, writes) => {
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

  it.each([
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
  ])('%j cannot be split (%s)', (command, problem) => {
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
