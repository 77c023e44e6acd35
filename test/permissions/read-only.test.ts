import { decidePermission, type PermissionContext } from '../../src/shared/permissions';
import { classifyReadOnlyBash, isReadOnlyBashCommand, parseShell, readBashCommand } from '../../src/shared/shell';

describe('parseShell', () => {
  const words = (command: string) => parseShell(command).commands.map((c) => c.words.map((w) => w.value));

  it('undoes quoting, backslashes and ANSI-C strings', () => {
    expect(words(`r''m "a b" c\\ d $'\\x72\\155\\u0021\\t' \\$x`)).toEqual([['rm', 'a b', 'c d', 'rm!\t', '$x']]);
  });

  it('records what bash would still expand, and whether a word may split', () => {
    const [command] = parseShell('$X "$Y" *.ts ~/a {a,b} {} "$@" $(date)').commands.slice(-1);
    expect(command?.words.map((w) => [w.expansions.join(','), w.splits])).toEqual([
      ['variable', true],
      ['variable', false],
      ['glob', true],
      ['tilde', false],
      ['brace', true],
      ['', false],
      ['variable', true],
      ['substitution', true],
    ]);
  });

  it('finds the commands inside substitutions, groups, loops, functions and here-documents', () => {
    const parsed = parseShell(
      'for f in $(ls); do { rm "$f"; }; done; g() { mv a b; }\ncat <<EOF\n`id`\nEOF\necho ${X:-$(pwd)} <(who)',
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.commands.map((c) => c.words[0]?.value)).toEqual([
      'ls',
      'rm',
      'mv',
      'cat',
      'id',
      'pwd',
      'who',
      'echo',
    ]);
    expect(parsed.commands.filter((c) => c.nested).map((c) => c.words[0]?.value)).toEqual(['ls', 'id', 'pwd', 'who']);
  });

  it.each([
    ['case x in a) rm;; esac', 'case'],
    ['echo "open', 'never closed'],
    ['ls |', 'ends with "|"'],
    ['; ls', 'no command before it'],
    ['cat <<EOF\nno end', 'no end marker'],
    ['echo ' + '$('.repeat(40) + ')'.repeat(40), 'too deeply'],
  ])('refuses what it cannot read: %j', (command, problem) => {
    expect(parseShell(command).problems.join(' ')).toContain(problem);
  });

  it.each([
    ["declare 'a[$(rm x)]=1'", 1],
    ['declare "a[\\$(rm x)]=1"', 1],
    ["declare $'\\x24(rm x)'", 1],
    ['echo \'$\'"(rm x)"', 1], // split across quotes
    ["grep '`' f", 1],
    ["for x in 'a[$(rm x)]'; do :; done", 1],
    ["cat <<'EOF'\n$(rm x)\nEOF", 1],
    ['echo ${x@P} ${!y}', 2], // one entry per word
    ["echo ${x:-'$(rm x)'}", 1],
    // Real substitutions, comments, plain `$` and listing keys hide nothing.
    ['echo $(date) "$(date)" `date`', 0],
    ['ls # $(rm x)', 0],
    ['awk \'{print $1}\' "$X("', 0],
    ['echo ${!a[@]} ${x@Q}', 0],
    ['cat <<EOF\n$(date)\nEOF', 0],
  ])('lists code hidden in text: %j', (command, count) => {
    expect(parseShell(command).hidden).toHaveLength(count);
  });
});

describe('readBashCommand: hidden code', () => {
  const hidden = (command: string) => readBashCommand(command).hidden.map((entry) => entry.why);

  it.each([
    ["bash -c 'echo $(date)'"],
    ["trap 'echo `date`' EXIT"],
    ["eval 'x=$(date)'"],
    ["alias l='ls $(pwd)'"],
    ["bash <<< 'echo $(date)'"],
    ["mapfile -C 'echo $(date)' -c 1 <<< x"],
    ["PROMPT_COMMAND='echo $(date)' bash -i"],
  ])('drops what it reads as a command line itself: %j', (command) => {
    expect(hidden(command)).toEqual([]);
  });

  it.each([
    ['PS4=x bash -xc :', 'sets PS4'],
    ['export BASH_ENV=./x.sh', 'sets BASH_ENV'],
    ["env 'SHELLOPTS=xtrace' bash -c :", 'sets SHELLOPTS'],
    ['read -r PS1', 'may set a variable'],
    ['bash -c \'declare "a[\\$(rm x)]=1"\'', 'as quoted text'],
  ])('keeps the rest: %j', (command, why) => {
    expect(hidden(command).join(' ')).toContain(why);
  });

  it('reads imported functions and callbacks for what they run', () => {
    const programs = (command: string) => readBashCommand(command).invocations.map((i) => i.program ?? '?');
    expect(programs("env 'BASH_FUNC_ls%%=() { rm x; }' bash -c ls")).toEqual(['env', 'rm', 'bash', 'ls']);
    expect(programs('readarray -t -C rm -c 1 <<< x')).toEqual(['readarray', 'rm']);
    expect(programs("compgen -C 'a; b' x")).toEqual(['compgen', 'a', 'b', '?']);
  });
});

describe('readBashCommand (what will really run)', () => {
  const programs = (command: string) => readBashCommand(command).invocations.map((i) => i.program ?? '?');

  it.each([
    ['timeout -k 1 5 nice -n 2 env -i A=1 rm x', ['timeout', 'nice', 'env', 'rm']],
    ['sudo -u me xargs -0 -n1 rm', ['sudo', 'xargs', 'rm']],
    ['find . -name x -exec sh -c \'rm -- "$1"\' _ {} \\;', ['find', 'sh', 'rm']],
    ['env -S \'bash -c "rm x"\'', ['env', 'bash', 'rm']],
    ['command -v rm', ['command']],
    ['git -C sub -c a=b push', ['git', 'git']],
    ['echo rm | sh', ['echo', 'sh', '?']],
  ])('%j runs %j', (command, expected) => {
    expect(programs(command)).toEqual(expected);
  });
});

describe('isReadOnlyBashCommand with and without a workspace', () => {
  const ctx = { workspace: '/ws', additionalDirectories: ['/data/shared'], homeDir: '/home/u' };

  it.each([
    ['cat src/a.ts', true, true],
    ['cat /ws/src/a.ts', false, true], // without a workspace no absolute path is known to be inside
    ['cat /data/shared/x.csv', false, true],
    ['cat ../x', false, false],
    ['cat ~/x', false, false],
    ['grep -r x', true, true],
    ['sleep 30', true, true],
    ['exit 3', false, false],
  ])('%j: context-free %s, in /ws %s', (command, bare, inWorkspace) => {
    expect(isReadOnlyBashCommand(command)).toBe(bare);
    expect(isReadOnlyBashCommand(command, ctx)).toBe(inWorkspace);
  });

  it('never opens /proc, /sys, /dev or home dot files, even from a workspace that contains them', () => {
    expect(isReadOnlyBashCommand('cat /proc/1/environ', { workspace: '/' })).toBe(false);
    expect(isReadOnlyBashCommand('cat /etc/hostname', { workspace: '/' })).toBe(true);
    expect(isReadOnlyBashCommand('cat /*', { workspace: '/' })).toBe(false);
    const home = { workspace: '/home/u', homeDir: '/home/u' };
    expect(isReadOnlyBashCommand('cat .ssh/id_rsa', home)).toBe(false);
    expect(isReadOnlyBashCommand('cat ~/.bashrc', home)).toBe(false);
    expect(isReadOnlyBashCommand('cat notes.txt .config2', home)).toBe(false);
    expect(isReadOnlyBashCommand('cat notes.txt *', home)).toBe(true); // `*` skips dot files
    // A workspace inside such an area opens what is below it.
    expect(isReadOnlyBashCommand('cat x', { workspace: '/home/u/.config/app', homeDir: '/home/u' })).toBe(true);
  });

  it('says why, and which path is outside', () => {
    expect(classifyReadOnlyBash('cat /etc/passwd src/a', ctx)).toEqual({
      readOnly: false,
      why: 'it reads /etc/passwd, outside the workspace and its added directories',
      outside: '/etc/passwd',
    });
    expect(classifyReadOnlyBash('npm test', ctx)).toMatchObject({
      readOnly: false,
      why: expect.stringContaining('npm'),
    });
    expect(classifyReadOnlyBash('grep -rl x src /data/shared', ctx)).toEqual({
      readOnly: true,
      reads: [
        { path: '/ws/src', tree: true },
        { path: '/data/shared', tree: true },
      ],
    });
  });
});

describe('additional directories', () => {
  const ctx = (mode: PermissionContext['mode']): PermissionContext => ({
    mode,
    rules: { allow: [], ask: [], deny: [] },
    workspace: '/ws',
    homeDir: '/home/u',
    additionalDirectories: ['/data/shared'],
  });
  const behavior = (mode: PermissionContext['mode'], tool: string, input: unknown) =>
    decidePermission(tool, input, ctx(mode)).behavior;

  it('reads there as in the workspace, and nowhere beside it', () => {
    expect(behavior('default', 'Read', { file_path: '/data/shared/a.md' })).toBe('allow');
    expect(behavior('plan', 'Grep', { pattern: 'x', path: '/data/shared' })).toBe('allow');
    expect(behavior('dontAsk', 'Glob', { pattern: '*', path: '/data/shared/sub' })).toBe('allow');
    expect(behavior('default', 'Read', { file_path: '/data/other/a.md' })).toBe('ask');
    expect(behavior('plan', 'Bash', { command: 'cat /data/shared/a.md' })).toBe('allow');
    expect(behavior('plan', 'Bash', { command: 'cat /data/sharedx/a.md' })).toBe('deny');
  });

  it('accepts edits there in acceptEdits, protected directories excepted', () => {
    expect(behavior('acceptEdits', 'Write', { file_path: '/data/shared/new.md', content: '' })).toBe('allow');
    expect(behavior('acceptEdits', 'Write', { file_path: '/data/shared/.git/config', content: '' })).toBe('ask');
    expect(behavior('default', 'Write', { file_path: '/data/shared/new.md', content: '' })).toBe('ask');
  });

  it('ignores entries that are not absolute paths', () => {
    const decision = decidePermission(
      'Read',
      { file_path: '/x/a' },
      { ...ctx('default'), additionalDirectories: ['x', 3 as unknown as string] },
    );
    expect(decision.behavior).toBe('ask');
  });
});
