/**
 * A small in-memory far side of the wire for unit tests: a `fetch` that answers get_token,
 * refresh_token and extension/list the way docs/wire-protocol.md says, on the test's FakeClock, with
 * scriptable faults. Integration tests use the real simulator (src-sim) instead.
 */
import type { Clock } from '../../src-shared/process/clock.ts';

export interface ScriptedAnswer {
  status: number;
  body: unknown; // a string is sent as is (not JSON-encoded)
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

interface Issued {
  access: Map<string, number>; // token -> expiresAt
  refresh: Map<string, number>;
}

export class FakeService {
  readonly key = 'key-abc123';
  secret = 'secret-XYZ-987654';
  accessLifeSec = 1800;
  refreshLifeSec = 86400;
  /** Whether refresh_token's answer carries a new refresh token. */
  refreshRotates = true;
  extensions: Array<Record<string, unknown>> = [];
  readonly requests: RecordedRequest[] = [];
  /** Requests per endpoint, scripted answers included. */
  readonly counts = { getToken: 0, refreshToken: 0, extensionList: 0 };
  /** Answers used, in order, for the next requests to a path (or any path with '*'). */
  private readonly scripts: Array<{ path: string; answer: ScriptedAnswer | 'hang' | 'network' }> =
    [];
  private readonly issued: Issued = { access: new Map(), refresh: new Map() };
  private serial = 0;
  /** The service's clock: the test's FakeClock, or the real one when the client runs on it. */
  private readonly clock: Clock;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** The next request to `path` (e.g. '/get_token', or '*') gets this answer instead. */
  script(path: string, answer: ScriptedAnswer | 'hang' | 'network', times = 1): void {
    for (let i = 0; i < times; i++) this.scripts.push({ path, answer });
  }

  expireAll(): void {
    for (const k of this.issued.access.keys()) this.issued.access.set(k, 0);
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.url.pathname.endsWith(path));
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    const bodyText = typeof init?.body === 'string' ? init.body : undefined;
    const body = bodyText === undefined ? undefined : JSON.parse(bodyText);
    this.requests.push({ method: init?.method ?? 'GET', url, headers, body });
    const path = url.pathname.replace('/openapi/v1.0', '');
    if (path === '/get_token') this.counts.getToken++;
    if (path === '/refresh_token') this.counts.refreshToken++;
    if (path === '/extension/list') this.counts.extensionList++;
    const i = this.scripts.findIndex((s) => s.path === path || s.path === '*');
    if (i >= 0) {
      const answer = this.scripts.splice(i, 1)[0]!.answer;
      if (answer === 'hang') return hang(init?.signal ?? undefined);
      if (answer === 'network')
        throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
      return respond(answer);
    }
    switch (path) {
      case '/get_token':
        return this.getToken(body as { username?: string; password?: string });
      case '/refresh_token':
        return this.refresh(body as { refresh_token?: string });
      case '/extension/list':
        return this.list(url, headers);
      default:
        return respond({ status: 404, body: 'not found' });
    }
  };

  private pair(withRefresh: boolean): Record<string, unknown> {
    const now = this.clock.now();
    const access = `at-${++this.serial}-${'a'.repeat(12)}`;
    this.issued.access.set(access, now + this.accessLifeSec * 1000);
    const out: Record<string, unknown> = {
      errcode: 0,
      errmsg: 'SUCCESS',
      access_token: access,
      access_token_expire_time: this.accessLifeSec,
    };
    if (withRefresh) {
      const refresh = `rt-${this.serial}-${'r'.repeat(12)}`;
      this.issued.refresh.set(refresh, now + this.refreshLifeSec * 1000);
      out.refresh_token = refresh;
      out.refresh_token_expire_time = this.refreshLifeSec;
    }
    return out;
  }

  private getToken(body: { username?: string; password?: string }): Response {
    if (body.username !== this.key || body.password !== this.secret) {
      return respond({ status: 401, body: { errcode: 10001, errmsg: 'INVALID KEY OR SECRET' } });
    }
    return respond({ status: 200, body: this.pair(true) });
  }

  private refresh(body: { refresh_token?: string }): Response {
    const expires = this.issued.refresh.get(body.refresh_token ?? '');
    if (expires === undefined || expires <= this.clock.now()) {
      return respond({ status: 401, body: { errcode: 10002, errmsg: 'TOKEN EXPIRED' } });
    }
    return respond({ status: 200, body: this.pair(this.refreshRotates) });
  }

  private list(url: URL, headers: Headers): Response {
    const token = /^Bearer (.+)$/.exec(headers.get('authorization') ?? '')?.[1] ?? '';
    const expires = this.issued.access.get(token);
    if (expires === undefined || expires <= this.clock.now()) {
      return respond({ status: 401, body: { errcode: 10002, errmsg: 'TOKEN EXPIRED' } });
    }
    const page = Number(url.searchParams.get('page') ?? '1');
    const size = Number(url.searchParams.get('page_size') ?? '20');
    const data = this.extensions.slice((page - 1) * size, page * size);
    return respond({
      status: 200,
      body: { errcode: 0, errmsg: 'SUCCESS', total_number: this.extensions.length, data },
    });
  }
}

function respond(answer: ScriptedAnswer): Response {
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  return new Response(text, {
    status: answer.status,
    headers: { 'content-type': 'application/json', ...answer.headers },
  });
}

/** A request that never answers; it rejects like fetch does when its signal aborts. */
function hang(signal: AbortSignal | undefined): Promise<Response> {
  return new Promise((_resolve, reject) => {
    signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), {
      once: true,
    });
  });
}

export function makeExtensions(n: number): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({
    number: String(101 + i),
    caller_id_name: `Person ${i + 1}`,
    email_addr: `p${i + 1}@example.com`,
    presence_status: 'available',
  }));
}
