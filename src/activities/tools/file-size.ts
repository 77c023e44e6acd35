/** A size as Claude Code writes it in its messages: "512 bytes", "1.1KB", "256KB", "3.5MB". */
export function formatFileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const unit = bytes < 1024 * 1024 ? 'KB' : 'MB';
  const value = bytes / (unit === 'KB' ? 1024 : 1024 * 1024);
  return `${value.toFixed(1).replace(/\.0$/, '')}${unit}`;
}
