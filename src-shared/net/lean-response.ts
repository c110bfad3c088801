/**
 * The answer of the transport's `fetch` (transport.ts), without Node's own fetch implementation:
 * Node's `Response` and `Headers` are undici's, loaded on first use, and loading them cost a
 * runner ~17 MB of its ~85 MB (7 MB of heap and malloc, 10 MB of the node binary's pages; measured
 * by `npm run bench:runner`, issue 24). The body is already whole in memory when the transport
 * answers (it reads it to the end, bounded), so the parts the services use (status, headers, text,
 * json, bytes) are plain code over a Buffer. What nobody here uses (the body as a stream, blob,
 * formData) is served by a real Response made on first use, so nothing of the Fetch API is missing.
 *
 * Headers follow the Fetch rules the services rely on: names case-insensitive, several values of
 * one name joined with ", " (set-cookie kept apart), iteration sorted by name.
 */

type HeaderPairs = Array<[string, string]>;
type HeadersInit = NonNullable<RequestInit['headers']>;

/** The pairs of any HeadersInit (a Headers, ours or Node's; pairs; a record), without `new Headers`. */
function headerPairs(init: HeadersInit | undefined): HeaderPairs {
  if (!init) return [];
  const pairs: HeaderPairs = [];
  const asHeaders = init as { forEach?: unknown };
  if (typeof asHeaders.forEach === 'function' && !Array.isArray(init)) {
    (init as Headers).forEach((value, name) => pairs.push([name, value]));
  } else if (Array.isArray(init)) {
    for (const pair of init) {
      if (pair.length !== 2) throw new TypeError('Headers: each pair needs a name and a value');
      pairs.push([String(pair[0]), String(pair[1])]);
    }
  } else {
    for (const [name, value] of Object.entries(init as Record<string, string>))
      pairs.push([name, String(value)]);
  }
  return pairs;
}

/** An HTTP token (RFC 9110 5.6.2): what a header name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value may not hold CR, LF or NUL; outer spaces and tabs are dropped. */
const BAD_VALUE = /[\r\n\0]/;

function checked(name: string, value: string): [string, string] {
  if (!TOKEN.test(name)) throw new TypeError(`Headers: invalid header name "${name}"`);
  const trimmed = value.replace(/^[ \t]+|[ \t]+$/g, '');
  if (BAD_VALUE.test(trimmed)) throw new TypeError(`Headers: invalid value for "${name}"`);
  return [name.toLowerCase(), trimmed];
}

export class LeanHeaders implements Headers {
  /** Lower-case name -> values in the order they came. */
  private readonly byName = new Map<string, string[]>();

  constructor(init?: HeadersInit) {
    for (const [name, value] of headerPairs(init)) this.append(name, value);
  }

  append(name: string, value: string): void {
    const [key, v] = checked(name, value);
    const list = this.byName.get(key);
    if (list) list.push(v);
    else this.byName.set(key, [v]);
  }

  set(name: string, value: string): void {
    const [key, v] = checked(name, value);
    this.byName.set(key, [v]);
  }

  delete(name: string): void {
    this.byName.delete(name.toLowerCase());
  }

  get(name: string): string | null {
    return this.byName.get(name.toLowerCase())?.join(', ') ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.byName.get('set-cookie') ?? [])];
  }

  has(name: string): boolean {
    return this.byName.has(name.toLowerCase());
  }

  forEach(
    callback: (value: string, key: string, parent: Headers) => void,
    thisArg?: unknown,
  ): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  *entries(): Generator<[string, string]> {
    for (const name of [...this.byName.keys()].sort()) {
      const list = this.byName.get(name)!;
      if (name === 'set-cookie') for (const v of list) yield [name, v];
      else yield [name, list.join(', ')];
    }
  }

  *keys(): Generator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): Generator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): Generator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }
}

export interface LeanResponseInit {
  status: number;
  statusText: string;
  headers: LeanHeaders;
  /** The URL that was asked (the transport follows no redirect). */
  url: string;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

export class LeanResponse implements Response {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly url: string;
  readonly redirected = false;
  readonly type: Response['type'] = 'basic';
  /** The body not read yet; null once read, or when there was none. */
  private bytesLeft: Buffer | null;
  private readonly hadBody: boolean;
  private used = false;
  private realResponse: Response | undefined;

  /** `body`: the whole body, or null for none (HEAD, 204, 304). */
  constructor(body: Buffer | null, init: LeanResponseInit) {
    if (init.status < 200 || init.status > 599)
      throw new RangeError(`Response: status ${init.status} is not 200 to 599`);
    this.status = init.status;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.url = init.url;
    this.hadBody = body !== null && body.length > 0;
    this.bytesLeft = this.hadBody ? body : null;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get bodyUsed(): boolean {
    return this.realResponse ? this.realResponse.bodyUsed : this.used;
  }

  /**
   * The body as a stream, made by a real Response (Node's fetch) on first use; null when there is
   * none, and (unlike fetch, where it is a spent stream) once read by text(), json() or bytes().
   */
  get body(): Response['body'] {
    if (this.realResponse) return this.realResponse.body;
    if (!this.hadBody || this.used) return null;
    return this.real().body;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.realResponse) return this.realResponse.bytes();
    const bytes = this.take();
    const out = new Uint8Array(bytes.length);
    out.set(bytes);
    return out;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.realResponse) return this.realResponse.arrayBuffer();
    const bytes = this.take();
    const out = new ArrayBuffer(bytes.length);
    new Uint8Array(out).set(bytes);
    return out;
  }

  async text(): Promise<string> {
    if (this.realResponse) return this.realResponse.text();
    const bytes = this.take();
    const bom = UTF8_BOM.every((b, i) => bytes[i] === b);
    return bytes.toString('utf8', bom ? 3 : 0);
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get('content-type') ?? '' });
  }

  formData(): Promise<FormData> {
    return this.real().formData();
  }

  clone(): Response {
    if (this.realResponse) return this.realResponse.clone();
    if (this.used) throw new TypeError('Response.clone: the body has already been read');
    return new LeanResponse(this.bytesLeft, {
      status: this.status,
      statusText: this.statusText,
      headers: new LeanHeaders(this.headers),
      url: this.url,
    });
  }

  get [Symbol.toStringTag](): string {
    return 'Response';
  }

  /** The body, once: a second read fails as it does with fetch. */
  private take(): Buffer {
    if (this.used) throw new TypeError('Body is unusable: the body has already been read');
    this.used = true;
    const bytes = this.bytesLeft ?? Buffer.alloc(0);
    this.bytesLeft = null;
    return bytes;
  }

  /** Node's own Response over the same bytes, for the parts of the API this class does not do. */
  private real(): Response {
    if (!this.realResponse) {
      if (this.used) throw new TypeError('Body is unusable: the body has already been read');
      this.realResponse = new Response(this.bytesLeft, {
        status: this.status,
        statusText: this.statusText,
        headers: [...this.headers],
      });
      this.bytesLeft = null; // the real Response owns the body from here on
    }
    return this.realResponse;
  }
}
