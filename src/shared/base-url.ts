/** Addresses a model base URL could be, for the messages below. */
const EXAMPLES = 'e.g. https://api.anthropic.com or http://127.0.0.1:8080';

/**
 * What makes `value` unusable as the model API's base URL (`ANTHROPIC_BASE_URL`), or undefined
 * when it is usable. The words never repeat the value's user name or password: only its scheme,
 * host and path, and nothing of a value that is not an http(s) URL.
 */
export function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `ANTHROPIC_BASE_URL is not a URL: give the whole address with its scheme, ${EXAMPLES}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `ANTHROPIC_BASE_URL does not start with http:// or https://: give the whole address with its scheme, ${EXAMPLES}`;
  }
  if (url.username || url.password) {
    const shown = `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
    return (
      `ANTHROPIC_BASE_URL ${shown} has a user name or password in it, which Node's fetch refuses to send: ` +
      `take "user:password@" out of it and give the key in ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)`
    );
  }
  return undefined;
}
