import WebSocket from 'ws';
import type { SimApiKey, Simulator } from '../../src-sim/index.ts';
import { waitFor } from '../../rigs/wait.ts';

/** Client-side helpers for the simulator tests: plain fetch and ws, nothing from the app. */
export interface TokenPair {
  errcode: number;
  errmsg: string;
  access_token: string;
  access_token_expire_time: number;
  refresh_token: string;
  refresh_token_expire_time: number;
}

export interface JsonAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export async function call(
  sim: Simulator,
  path: string,
  init: RequestInit = {},
): Promise<JsonAnswer> {
  const res = await fetch(sim.baseUrl + path, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

export function postJson(
  sim: Simulator,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer> {
  return call(sim, path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function getToken(sim: Simulator, key: SimApiKey = sim.apiKey): Promise<TokenPair> {
  const answer = await postJson(sim, '/openapi/v1.0/get_token', {
    username: key.key,
    password: key.secret,
  });
  if (answer.status !== 200)
    throw new Error(`get_token failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as unknown as TokenPair;
}

export function listExtensions(sim: Simulator, token: string, query = ''): Promise<JsonAnswer> {
  return call(sim, `/openapi/v1.0/extension/list${query}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
}

export function wsUrl(sim: Simulator): string {
  return `${sim.baseUrl.replace(/^http/, 'ws')}/openapi/v1.0/subscribe`;
}

export interface TestSocket {
  ws: WebSocket;
  /** Every text frame received, in order. */
  frames: string[];
  closed: Promise<{ code: number; reason: string }>;
  isClosed(): boolean;
  /** Waits until at least `n` frames arrived; returns them all. */
  waitFrames(n: number, timeoutMs?: number): Promise<string[]>;
  subscribe(codes: number[]): Promise<Record<string, unknown>>;
  close(): void;
}

export interface Rejection {
  status: number;
  body: Record<string, unknown>;
}

/** Opens the subscribe socket; rejects with {status, body} when the handshake is refused. */
export function openSocket(
  sim: Simulator,
  token: string | undefined,
  opts: { viaQuery?: boolean } = {},
): Promise<TestSocket> {
  const url =
    opts.viaQuery && token ? `${wsUrl(sim)}?access_token=${encodeURIComponent(token)}` : wsUrl(sim);
  const headers: Record<string, string> = { 'User-Agent': 'screenpop-sim-tests' };
  if (token && !opts.viaQuery) headers.Authorization = `Bearer ${token}`;
  const ws = new WebSocket(url, { headers });
  const frames: string[] = [];
  let closedFlag = false;
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      closedFlag = true;
      resolve({ code, reason: reason.toString() });
    }),
  );
  ws.on('message', (data) => frames.push(data.toString()));
  const socket: TestSocket = {
    ws,
    frames,
    closed,
    isClosed: () => closedFlag,
    async waitFrames(n, timeoutMs = 3000) {
      await waitFor(() => frames.length >= n, `${n} frames (have ${frames.length})`, {
        timeoutMs: timeoutMs,
      });
      return frames;
    },
    async subscribe(codes) {
      const before = frames.length;
      ws.send(JSON.stringify({ topic_list: codes }));
      await socket.waitFrames(before + 1);
      return JSON.parse(frames[before] as string) as Record<string, unknown>;
    },
    close: () => ws.terminate(),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        ws.terminate();
        reject({ status: res.statusCode ?? 0, body: JSON.parse(text) } satisfies Rejection);
      });
    });
    ws.once('error', (err) => reject(err));
  });
}

export async function rejectionOf(promise: Promise<TestSocket>): Promise<Rejection> {
  try {
    const s = await promise;
    s.close();
  } catch (err) {
    return err as Rejection;
  }
  throw new Error('handshake was accepted');
}
