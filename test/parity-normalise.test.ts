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
