import fs from 'node:fs';
import path from 'node:path';
import { loadAgentDefinitions, parseAgentDefinition } from '../src/activities/agent-definitions';
import { makeWorkspace, tempDir } from './support/harness';

describe('.claude/agents definitions', () => {
  test("Claude Code's format: front matter, then the agent's system prompt", () => {
    const text = [
      '---',
      'name: code-reviewer',
      'description: "Reviews a change for bugs"',
      'tools: Read, Grep, Glob',
      'model: haiku',
      '---',
      'You review code.',
      '',
      'Be brief.',
    ].join('\n');
    expect(parseAgentDefinition(text, 'code-reviewer.md', 'project')).toEqual({
      name: 'code-reviewer',
      description: 'Reviews a change for bugs',
      tools: ['Read', 'Grep', 'Glob'],
      model: 'haiku',
      prompt: 'You review code.\n\nBe brief.',
      source: 'project',
      file: 'code-reviewer.md',
    });
    // `model: inherit` and no tools: the job's model and all of its tools.
    expect(parseAgentDefinition('---\nname: a\ndescription: b\nmodel: inherit\n---\nBody', 'a.md', 'user')).toEqual({
      name: 'a',
      description: 'b',
      prompt: 'Body',
      source: 'user',
      file: 'a.md',
    });
  });

  test('a file without front matter, a name or a description is no definition', () => {
    expect(parseAgentDefinition('Just text', 'x.md', 'project')).toBeUndefined();
    expect(parseAgentDefinition('---\ndescription: d\n---\nBody', 'x.md', 'project')).toBeUndefined();
    expect(parseAgentDefinition('---\nname: x\n---\nBody', 'x.md', 'project')).toBeUndefined();
    expect(parseAgentDefinition('---\nname: ../x\ndescription: d\n---\nBody', 'x.md', 'project')).toBeUndefined();
  });

  test("the workspace's win over the user's; a symlink out of the workspace is not followed; sources are honoured", async () => {
    const home = tempDir('agents-home');
    fs.mkdirSync(path.join(home, '.claude', 'agents'), { recursive: true });
    fs.writeFileSync(path.join(home, '.claude', 'agents', 'shared.md'), '---\nname: shared\ndescription: user\n---\nU');
    fs.writeFileSync(
      path.join(home, '.claude', 'agents', 'mine.md'),
      '---\nname: mine\ndescription: user only\n---\nM',
    );
    const secret = path.join(home, 'secret.md');
    fs.writeFileSync(secret, '---\nname: leaked\ndescription: outside\n---\nSECRET');
    const workspace = makeWorkspace({ '.claude/agents/shared.md': '---\nname: shared\ndescription: project\n---\nP' });
    fs.symlinkSync(secret, path.join(workspace, '.claude', 'agents', 'leaked.md'));

    const all = await loadAgentDefinitions(workspace, home, undefined);
    expect(all.map((each) => [each.name, each.description])).toEqual([
      ['mine', 'user only'],
      ['shared', 'project'],
    ]);
    expect((await loadAgentDefinitions(workspace, home, ['project'])).map((each) => each.name)).toEqual(['shared']);
    expect((await loadAgentDefinitions(workspace, home, ['user'])).map((each) => each.description)).toEqual([
      'user only',
      'user',
    ]);
  });
});
