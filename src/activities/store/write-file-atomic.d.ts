// write-file-atomic ships no types; this is the part of its API used here (npm/write-file-atomic README).
declare module 'write-file-atomic' {
  interface Options {
    chown?: { uid: number; gid: number } | false;
    encoding?: BufferEncoding | null;
    fsync?: boolean;
    mode?: number | false;
    tmpfileCreated?: (tmpfile: string) => void | Promise<void>;
  }
  function writeFileAtomic(filename: string, data: string | Buffer, options?: Options | BufferEncoding): Promise<void>;
  export = writeFileAtomic;
}
