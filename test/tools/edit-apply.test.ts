import { applyEdits, type ChangedSpan, type EditOperation } from '../../src/activities/tools/edit-apply';
import { editSnippet } from '../../src/activities/tools/edit-snippet';

/** A small deterministic PRNG (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The reference: every character carries a "written by an edit" mark; the changed spans are the
 * runs of marked characters. Slow and obviously right.
 */
function referenceSpans(content: string, edits: readonly EditOperation[]): { text: string; spans: ChangedSpan[] } {
  let chars = [...content].map((char) => ({ char, changed: false }));
  for (const edit of edits) {
    const text = chars.map((c) => c.char).join('');
    const hits: number[] = [];
    for (
      let at = text.indexOf(edit.old_string);
      at >= 0;
      at = text.indexOf(edit.old_string, at + edit.old_string.length)
    ) {
      hits.push(at);
      if (!edit.replace_all) break;
    }
    for (const at of hits.reverse()) {
      const inserted = [...edit.new_string].map((char) => ({ char, changed: true }));
      chars = [...chars.slice(0, at), ...inserted, ...chars.slice(at + edit.old_string.length)];
    }
  }
  const spans: ChangedSpan[] = [];
  chars.forEach((c, i) => {
    if (!c.changed) return;
    const last = spans[spans.length - 1];
    if (last && last.end === i) last.end = i + 1;
    else spans.push({ start: i, end: i + 1 });
  });
  return { text: chars.map((c) => c.char).join(''), spans };
}

describe('applyEdits', () => {
  it('applies edits in order, each on the previous result', () => {
    expect(
      applyEdits('alpha beta gamma', [
        { old_string: 'beta', new_string: 'BETA' },
        { old_string: 'BETA gamma', new_string: 'delta' },
      ]),
    ).toEqual({ ok: true, content: 'alpha delta', replacements: 2, changes: [{ start: 6, end: 11 }] });
  });

  it('stops at the first failing edit and names its index', () => {
    const result = applyEdits('a b a', [
      { old_string: 'b', new_string: 'c' },
      { old_string: 'a', new_string: 'x' },
    ]);
    expect(result).toMatchObject({ ok: false, index: 1, error: expect.stringContaining('Found 2 matches') });
    expect(applyEdits('abc', [{ old_string: 'zz', new_string: 'y' }])).toMatchObject({
      ok: false,
      index: 0,
      error: 'String to replace not found in file.\nString: zz',
    });
  });

  it('tracks changed spans exactly like a character-by-character reference', () => {
    const next = random(42);
    const pick = (alphabet: string, max: number) =>
      Array.from({ length: Math.floor(next() * max) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    let checked = 0;
    for (let round = 0; round < 3000; round++) {
      const content = pick('ab\n', 30);
      const edits: EditOperation[] = Array.from({ length: 1 + Math.floor(next() * 4) }, () => ({
        old_string: pick('ab\n', 3) || 'a',
        new_string: pick('abXY\n', 4),
        replace_all: next() < 0.5,
      }));
      const result = applyEdits(content, edits);
      if (!result.ok) continue;
      const reference = referenceSpans(content, edits);
      expect(result.content).toBe(reference.text);
      expect(result.changes.filter((span) => span.end > span.start)).toEqual(reference.spans);
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
  });
});

describe('editSnippet', () => {
  const file = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
  const at = (line: number) => file.indexOf(`line ${line}\n`);

  it('shows four lines of context around a change, numbered like Read', () => {
    expect(editSnippet(file, [{ start: at(10), end: at(11) }])).toBe(
      [6, 7, 8, 9, 10, 11, 12, 13, 14].map((n) => `${String(n).padStart(6)}\tline ${n}`).join('\n'),
    );
  });

  it('merges close regions and separates distant ones with ...', () => {
    const snippet = editSnippet(file, [
      { start: at(2), end: at(2) + 1 },
      { start: at(8), end: at(8) + 1 },
      { start: at(25), end: at(25) + 1 },
    ]);
    const numbers = snippet.split('\n').map((line) => (line === '...' ? line : Number(line.split('\t')[0])));
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, '...', 21, 22, 23, 24, 25, 26, 27, 28, 29]);
  });

  it('summarises past 80 lines and says the file is empty when it is', () => {
    const long = Array.from({ length: 500 }, (_, i) => `x${i}`).join('\n');
    const changes = Array.from({ length: 50 }, (_, i) => ({
      start: long.indexOf(`x${i * 10}\n`),
      end: long.indexOf(`x${i * 10}\n`) + 1,
    }));
    const lines = editSnippet(long, changes).split('\n');
    expect(lines.length).toBeLessThan(100);
    expect(lines[lines.length - 1]).toMatch(
      /^\.\.\. \(\d+ more edited regions not shown; Read the file to see them\)$/,
    );
    expect(editSnippet('', [{ start: 0, end: 0 }])).toBe('');
  });
});
