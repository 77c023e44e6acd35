import { contentText, normalise, shortDiff } from './parity/normalise';

describe("the parity suite's normalisation", () => {
  test('drops what differs between runs, and nothing the model reads differently', () => {
    const ws = '/tmp/parity-x/read/cc';
    expect(normalise(`Path ${ws}/a.txt, took 1000 ms, id 539c453b-b195-4997-ac48-430c4fd5dfe6  \n\n`, [ws])).toBe(
      'Path <ws>/a.txt, took <duration>, id <uuid>',
    );
    // A gutter's padding is not a difference; the numbers and the tab are.
    expect(normalise('     1\thello\n    12\tx', [])).toBe('1\thello\n12\tx');
    expect(normalise('1 hello', [])).toBe('1 hello');
    expect(normalise('Exit code 42', [])).toBe('Exit code 42');
  });

  test("takes the file a long output was saved to, in either's layout, as the same file", () => {
    const ws = '/tmp/parity-x/bash-long-output/cc';
    const cc = `Full output saved to: /tmp/parity-x/bash-long-output/cc-home-Ab12/.claude/projects/-tmp-parity-x-bash-long-output-cc/539c453b-b195-4997-ac48-430c4fd5dfe6/tool-results/bdo4ssbx1.txt\n\nPreview`;
    const da = 'Full output saved to: .durable-agent/tool-results/Bash-c66bd4a6eb8597fb.txt\n\nPreview';
    expect(normalise(cc, [ws])).toBe('Full output saved to: <saved output file>\n\nPreview');
    expect(normalise(da, [ws])).toBe(normalise(cc, [ws]));
    // Any other path stays as it is.
    expect(normalise(`Read ${ws}/tool-results/x.txt`, [ws])).toBe('Read <ws>/tool-results/x.txt');
  });

  test('takes bash by any path as bash, in its own messages only', () => {
    const notFound = 'bash: line 1: nosuchcommand: command not found';
    expect(normalise(`Exit code 127\n/bin/bash: line 1: nosuchcommand: command not found`, [])).toBe(
      `Exit code 127\n${notFound}`,
    );
    expect(normalise(`/usr/bin/bash: line 1: nosuchcommand: command not found`, [])).toBe(notFound);
    expect(normalise(notFound, [])).toBe(notFound);
    expect(normalise('see /bin/bash: it is a shell', [])).toBe('see /bin/bash: it is a shell');
  });

  test('reads text blocks and says where two views first differ', () => {
    expect(
      contentText([
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ]),
    ).toBe('a\nb');
    expect(shortDiff('x\ny', 'x\ny')).toBe('');
    expect(shortDiff('x\ny', 'x\nz')).toBe('line 2: cc "y" | da "z" (2 vs 2 lines)');
    expect(shortDiff('x\ny', 'x')).toBe('line 2: cc "y" | da (nothing) (2 vs 1 lines)');
  });
});
