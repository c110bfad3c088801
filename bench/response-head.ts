/**
 * The response head of the benchmark's hand-written HTTP clients (ws-load-client.ts,
 * sse-load-client.ts): both send their request on a plain TCP socket and read the answer in place.
 */

/**
 * What follows the HTTP/1.1 response head in `data`: undefined while the head is not whole yet
 * (keep `data` and wait for more); an Error naming `refusal` and the status code when the status
 * is not `status`.
 */
export function afterResponseHead(
  data: Buffer,
  status: string,
  refusal: string,
): Buffer | Error | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  if (!data.toString('latin1', 0, 12).startsWith(`HTTP/1.1 ${status}`))
    return new Error(`${refusal}: ${data.toString('latin1', 9, 12)}`);
  return data.subarray(end + 4);
}
