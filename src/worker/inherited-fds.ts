import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** Linux's O_CLOEXEC, as /proc/<pid>/fdinfo shows the flags (octal). */
const O_CLOEXEC = 0o2000000;

/**
 * Close the descriptors this process inherited beyond stdin, stdout and stderr, so no command it starts gets them: whatever started the worker may
 * hold a file or socket open (a shell's `250<secret`, a CI runner's pipes), and a sandboxed command
 * could read it with `cat <&250` though the sandbox hides the file. Node opens all of its own
 * descriptors close-on-exec, so those without the flag are the inherited ones. Returns what it closed.
 */
export function closeInheritedDescriptors(): number[] {
  // (An IPC channel to the parent, as the helper has, is close-on-exec: Node opens it so.)
  const keep = new Set([0, 1, 2]);
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || keep.has(fd)) continue;
    let flags: string | undefined;
    try {
      flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
    } catch {
      // Gone already (the one readdirSync listed the folder through).
      continue;
    }
    if (flags === undefined || (parseInt(flags, 8) & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}
