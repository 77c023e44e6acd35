/**
 * Extensions of formats that are binary even when their first bytes hold no NUL (a GIF starts
 * with "GIF89a"): Read refuses them rather than show mojibake, except the images and PDFs it
 * shows as such (read-media.ts).
 */
const BINARY_EXTENSIONS: ReadonlySet<string> = new Set(
  [
    // Images and media
    'png jpg jpeg gif bmp ico webp tif tiff heic avif psd mp3 mp4 m4a mov avi mkv webm wav flac ogg aac',
    // Documents and fonts
    'pdf doc docx xls xlsx ppt pptx odt ods odp ttf otf woff woff2 eot',
    // Archives
    'zip gz tgz bz2 xz zst 7z rar tar jar war whl apk dmg iso',
    // Compiled code and databases
    'exe dll so dylib o a lib obj class pyc pyo wasm node sqlite sqlite3 db bin dat',
  ]
    .join(' ')
    .split(' '),
);

/** The binary extension of `file` (lower case, with the dot), or undefined when it is not one. */
export function binaryExtension(file: string): string | undefined {
  const base = file.slice(file.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const extension = base.slice(dot + 1).toLowerCase();
  return BINARY_EXTENSIONS.has(extension) ? `.${extension}` : undefined;
}
