/**
 * Organisation mode's call claims in tests (docs/relay-protocol.md 2.2, "Claiming a call's log"):
 * a claim over HTTP, two enrolled users, and two users racing for the same call ids.
 */
import { expect } from 'vitest';
import { relayClaimPath, type CallClaimAnswer } from '../../src-shared/relay/relay-protocol.ts';
import type { UserStore } from '../../src-relay/users/types.ts';
import { addUser, enrol } from './users-support.ts';

export async function claim(
  relayUrl: string,
  credential: string,
  body: unknown,
): Promise<{ status: number; body: CallClaimAnswer & { errcode?: number; errmsg?: string } }> {
  const res = await fetch(relayUrl + relayClaimPath('acme'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${credential}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as CallClaimAnswer };
}

export async function credentials(users: UserStore, relayUrl: string): Promise<[string, string]> {
  const alice = await enrol(relayUrl, await addUser(users, 'alice', ['101']));
  const bob = await enrol(relayUrl, await addUser(users, 'bob', ['102']));
  return [alice.body.credential, bob.body.credential];
}

/** Both users claim each of `n` call ids at the same instant: exactly one holds each. */
export async function raceBoth(urls: [string, string], alice: string, bob: string, n: number) {
  const ids = Array.from({ length: n }, (_, i) => `1763802000.${i}`);
  const answers = await Promise.all(
    ids.map((callId) =>
      Promise.all([claim(urls[0], alice, { callId }), claim(urls[1], bob, { callId })]),
    ),
  );
  for (const [a, b] of answers) {
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.holder).toBe(b.body.holder);
    expect([a.body.mine, b.body.mine].filter(Boolean)).toHaveLength(1);
  }
  // A retry (a restart) by each: the holder is told it holds it, the other who does.
  for (const [i, callId] of ids.entries()) {
    const holder = answers[i]![0].body.holder;
    const again = await claim(urls[0], alice, { callId });
    expect(again.body).toEqual({ callId, holder, mine: holder === 'alice' });
  }
}
