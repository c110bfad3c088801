/**
 * Every example frame and answer of Yeastar's P-Series developer guide (test/fixtures/yeastar-p-series,
 * its README says which page each comes from), decoded by the code that meets them on the wire.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  YeastarEventDecoder,
  type DecodeResult,
} from '../../src-shared/phone-systems/yeastar-p-series.ts';
import type { EventEnvelope } from '../../src-shared/wire/event-codes.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { parseExtensionPage, parseTokenPair } from '../../src-shared/api/wire.ts';
import { parseCompanyContactPage, parseGroupPage } from '../../src-shared/api/pbx-lists.ts';
import { EventPipeline, type Dismiss, type Pop } from '../../src-main/core/events/pipeline.ts';
import { YEASTAR_P_SERIES_WIRE } from '../../src-shared/wire/yeastar-p-series.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
/** Names of the fixtures this file decodes; the last test fails for one nobody reads. */
const used = new Set<string>(['README.md']);
const fixture = (name: string) => {
  used.add(name);
  return read(name);
};

const T0 = Date.UTC(2026, 0, 16, 9, 0, 0);

function decodeAll(names: string[], decoder = new YeastarEventDecoder()): EventEnvelope[][] {
  return names.map((name, i) => {
    const result = decoder.decode(fixture(name), T0 + i * 1000, i * 1000);
    expect(result, name).toMatchObject({ ok: true });
    return (result as Extract<DecodeResult, { ok: true }>).envelopes;
  });
}

const calls = (envelopes: EventEnvelope[]) =>
  envelopes.map((e): Record<string, unknown> => ({ ...e.data, event: e.event }));

describe('Yeastar P-Series frames from the guide', () => {
  it('30011: an outside call ringing an extension is one ringing envelope for it, the caller from the inbound member', () => {
    const [ring, answered] = decodeAll([
      'constructed-30011-inbound-rings-101.json',
      'constructed-30011-inbound-answered-by-101.json',
    ]);
    expect(calls(ring!)).toEqual([
      {
        event: 30011,
        call_id: '1700000001.11',
        from: '+4930123456',
        to: '101',
        state: 'ringing',
        line: '5503301',
        member_status: 'RING',
      },
    ]);
    // The answer frame has `msg` as an object, not a string: the same call, now answered.
    expect(calls(answered!)).toMatchObject([{ to: '101', state: 'answered', from: '+4930123456' }]);
    expect(ring![0]!.receiptStamped).toBe(true);
    expect(ring![0]!.timestamp).toBe(T0);
    expect(ring![0]!.tenant).toBe('3631A2124XXX');
  });

  it('30011: a ring group rings both; when a colleague answers, the other is no longer ringing', () => {
    const [ring, answered] = decodeAll([
      'constructed-30011-ring-group-rings-101-102.json',
      'constructed-30011-ring-group-answered-by-102.json',
    ]);
    expect(calls(ring!).map((c) => [c.to, c.state])).toEqual([
      ['101', 'ringing'],
      ['102', 'ringing'],
    ]);
    // 101 is not listed any more: its ring ended there (after the colleague's answer in order).
    expect(calls(answered!).map((c) => [c.to, c.state])).toEqual([
      ['102', 'answered'],
      ['101', 'ended'],
    ]);
  });

  it('30011: the same report again next (a retried delivery) decodes to the same envelopes, the ended ring too', () => {
    // The relay decodes, then fails to store and answers 503; the PBX sends the report again.
    const [, answered, retried] = decodeAll([
      'constructed-30011-ring-group-rings-101-102.json',
      'constructed-30011-ring-group-answered-by-102.json',
      'constructed-30011-ring-group-answered-by-102.json',
    ]);
    expect(retried).toEqual(answered);
    expect(calls(retried!).map((c) => [c.to, c.state])).toContainEqual(['101', 'ended']);
    // Not a retry: the same text after another report of the call is decoded anew.
    const [, , , again] = decodeAll([
      'constructed-30011-ring-group-rings-101-102.json',
      'constructed-30011-ring-group-answered-by-102.json',
      'constructed-30011-ring-group-rings-101-102.json',
      'constructed-30011-ring-group-answered-by-102.json',
    ]);
    expect(calls(again!).map((c) => [c.to, c.state])).toEqual([
      ['102', 'answered'],
      ['101', 'ended'],
    ]);
  });

  it('30011: an internal call names the calling extension as the caller (ALERT), and ends with BYE', () => {
    const decoder = new YeastarEventDecoder();
    const [ring, bye] = decodeAll(
      ['constructed-30011-internal-102-calls-101.json', 'constructed-30011-internal-hung-up.json'],
      decoder,
    );
    expect(calls(ring!).map((c) => [c.from, c.to, c.state])).toEqual([
      ['102', '102', 'calling'],
      ['102', '101', 'ringing'],
    ]);
    expect(calls(bye!).map((c) => [c.to, c.state])).toEqual([
      ['102', 'ended'],
      ['101', 'ended'],
    ]);
    // Every leg BYE: the legs are forgotten; the caller is kept (bounded) for a late leg's report.
    expect(decoder.callsRemembered).toBe(1);
  });

  it('30011: an extension dialling out is calling, not ringing (EARLYMEDIA is the outside party)', () => {
    const [out] = decodeAll(['constructed-30011-outbound-101-dials-out.json']);
    expect(calls(out!).map((c) => [c.to, c.state])).toEqual([['101', 'calling']]);
  });

  it('30010: the numeric trunk status becomes the core trunk event (1 idle = registered)', () => {
    const [trunk] = decodeAll(['event-30010-trunk-idle.json']);
    expect(trunk).toMatchObject([
      { event: 30007, data: { trunk: 'peering', status: 'registered', vendor_status: 1 } },
    ]);
  });

  it('30009: presence becomes the core presence event', () => {
    const [presence] = decodeAll(['event-30009-presence-business-trip.json']);
    expect(presence).toMatchObject([
      { event: 30009, data: { extension: '2005', presence_status: 'business_trip' } },
    ]);
  });

  it('codes the app does not use decode to nothing, whatever their msg (string, object, no sn)', () => {
    const envelopes = decodeAll([
      'event-30007-extension-registered-mobile.json',
      'event-30007-extension-unregistered-web.json',
      'event-30008-extension-ringing.json',
      'event-30020-uacsta-call-start.json',
      'event-30023-trunk-created.json',
      'event-30034-system-info-msg-object.json',
      'event-30035-system-warning-msg-object.json',
      'event-30038-read-receipt.json',
      'event-30016-incoming-call-request.json',
    ]);
    expect(envelopes.flat()).toEqual([]);
  });

  it('the examples exactly as printed (not JSON) are refused with a reason, never a throw', () => {
    const decoder = new YeastarEventDecoder();
    expect(decoder.decode(fixture('event-30008-extension-ringing.as-printed.txt'), T0, 0)).toEqual({
      ok: false,
      reason: 'not-json',
    });
    expect(() => JSON.parse(fixture('response-success.as-printed.txt'))).toThrow();
  });

  it('the same frame twice (50 times) gives the same event ids; msg as string or object alike', () => {
    const decoder = new YeastarEventDecoder();
    const text = fixture('constructed-30011-ring-group-rings-101-102.json');
    const ids = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const r = decoder.decode(text, T0, i) as Extract<DecodeResult, { ok: true }>;
      for (const e of r.envelopes) ids.add(e.event_id);
    }
    expect(ids.size).toBe(2);
    // The same frame with msg as an object instead of a JSON string: the same ids.
    const asObject = JSON.parse(text) as { msg: string };
    const objectText = JSON.stringify({ ...asObject, msg: JSON.parse(asObject.msg) as unknown });
    const other = new YeastarEventDecoder().decode(objectText, T0 + 5, 0) as Extract<
      DecodeResult,
      { ok: true }
    >;
    expect(new Set(other.envelopes.map((e) => e.event_id))).toEqual(ids);
  });

  it('stamps frames with their receipt time, strictly increasing even within one millisecond', () => {
    const decoder = new YeastarEventDecoder();
    const text = fixture('event-30009-presence-business-trip.json');
    const stamps = [0, 1, 2].map(
      (i) =>
        (decoder.decode(text, T0, i) as Extract<DecodeResult, { ok: true }>).envelopes[0]!
          .timestamp,
    );
    expect(stamps).toEqual([T0, T0 + 1, T0 + 2]);
  });

  it('get_token and refresh_token answers are token pairs of 1800 s and 86400 s', () => {
    for (const name of ['get-token-response.json', 'refresh-token-response.json']) {
      const pair = parseTokenPair(JSON.parse(fixture(name)), T0, 'get_token');
      expect(pair.accessExpiresAt - T0).toBe(1800 * 1000);
      expect(pair.refreshExpiresAt - T0).toBe(86400 * 1000);
    }
    expect(JSON.parse(fixture('get-token-request.json'))).toHaveProperty('username');
    expect(JSON.parse(fixture('refresh-token-request.json'))).toHaveProperty('refresh_token');
  });

  it('the extension list (built from the page table) reads number, caller_id_name and email_addr', () => {
    const page = parseExtensionPage(
      JSON.parse(fixture('constructed-extension-list-response.json')),
      'extension/list',
    );
    expect(page).toEqual({
      extensions: [
        // The relay's gateway maps single sign-on by email_addr; an empty one is no address.
        { number: '101', callerIdName: 'Ada Lovelace', email: 'ada@example.com' },
        { number: '102', callerIdName: 'Grace Hopper' },
      ],
      received: 2,
      total: 2,
    });
  });

  it('the PBX lists (built from the page tables) read number and name, and contacts their numbers', () => {
    const queues = parseGroupPage(
      JSON.parse(fixture('constructed-queue-list-response.json')),
      'queue/list',
      'queue',
    );
    expect(queues.items.map((q) => [q.number, q.name])).toEqual([
      ['6400', 'Sales'],
      ['6401', 'Support'],
    ]);
    const ringGroups = parseGroupPage(
      JSON.parse(fixture('constructed-ring-group-list-response.json')),
      'ringgroup/list',
      'ring-group',
    );
    expect(ringGroups).toMatchObject({ received: 2, total: 2 });
    const contacts = parseCompanyContactPage(
      JSON.parse(fixture('constructed-company-contact-list-response.json')),
      'company_contact/list',
    );
    expect(contacts).toMatchObject({ received: 3, total: 3 });
    expect(contacts.items.map((c) => c.name)).toEqual(['Joseph Goffin', 'Jay Prichett']);
  });

  it("30016's example: the inbound member's `to` is the extension the call went to, not a DID", () => {
    const report = JSON.parse(fixture('event-30016-incoming-call-request.json')) as { msg: string };
    const msg = JSON.parse(report.msg) as { members: Array<{ inbound: Record<string, string> }> };
    expect(msg.members[0]?.inbound).toMatchObject({ from: '5503301', to: '2002', call_path: ' ' });
  });

  it('the subscribe and heartbeat words are those of the guide', () => {
    expect(JSON.parse(fixture('subscribe-request.json'))).toEqual({ topic_list: [30011, 30012] });
    expect(JSON.parse(fixture('subscribe-response.json'))).toEqual({
      errcode: 0,
      errmsg: 'SUCCESS',
    });
    expect(fixture('heartbeat-request.txt')).toBe('heartbeat');
    expect(fixture('heartbeat-response.txt')).toBe('heartbeat response');
  });

  it('error answers carry errcode and errmsg', () => {
    expect(JSON.parse(fixture('response-error-get-token.json'))).toMatchObject({ errcode: -1 });
    expect(JSON.parse(fixture('response-error-parameter.json'))).toMatchObject({ errcode: 40002 });
    // Revoke Access Token (the client's use of it: yeastar-client.test.ts).
    expect(JSON.parse(fixture('del-token-response.json'))).toEqual({
      errcode: 0,
      errmsg: 'SUCCESS',
    });
  });

  it("tokens (and webhook secrets) in the guide's request URLs are scrubbed from any text", () => {
    const scrubbed = new SecretRegistry().scrub(fixture('request-urls.txt'));
    for (const token of [
      '5SwyByhbSfsNlpI1v4GtHxEDmKsZwzjQ',
      'QJZDwxIAXBoVrUmeyLiHS3zQXrdynAmh',
      'Hb19mIhO9E1lfCWCF01P9D4R7MiG1Jow',
      'DEfChNyQmVMUZip90i8PqCfotJL7kIQB',
      'qnIdTBxyGgn2LckZrFw7IVeTRMJf3XfM',
    ])
      expect(scrubbed).not.toContain(token);
    expect(scrubbed).toContain('/openapi/v1.0/subscribe?access_token=[REDACTED]');
  });

  describe('frames captured from a real P570 (captured-*, issue 32; README: pienaahj/pbx-api)', () => {
    const order = (
      JSON.parse(fixture('captured-sequences.json')) as {
        order_of_arrival: Record<string, string[]>;
      }
    ).order_of_arrival;
    /** One call's frames, in the order they arrived, through the app's pipeline for extension 700. */
    const replay = async (prefix: string) => {
      const names = Object.entries(order).find(([k]) => k.startsWith(prefix))![1];
      const clock = new FakeClock();
      const pipeline = new EventPipeline({
        clock,
        user: { extensions: ['700'], dids: [], defaultRegion: 'ZA' },
      });
      const decode = YEASTAR_P_SERIES_WIRE.stream.decoder();
      const pops: Pop[] = [];
      const dismisses: Dismiss[] = [];
      pipeline.onPop((p) => pops.push(p));
      pipeline.onDismiss((d) => dismisses.push(d));
      const at: Record<string, [number, number]> = {};
      for (const name of names) {
        const before = [pops.length, dismisses.length];
        pipeline.ingest(fixture(name), { source: 'direct', receivedAt: clock.now() }, decode);
        at[name] = [pops.length - before[0]!, dismisses.length - before[1]!];
        await clock.advance(500);
      }
      const stats = pipeline.stats();
      expect(stats.rejected).toMatchObject({ 'bad-field': 0, 'not-json': 0, 'bad-call-data': 0 });
      return { pops, dismisses, at };
    };

    it('A: the caller hangs up while 700 rings: one pop naming the caller, dismissed by 700’s BYE', async () => {
      const a = await replay('A-');
      expect(a.pops).toMatchObject([{ from: '0815550100', line: '27875550100', to: '700' }]);
      // The ring comes with the caller in the same report (A3); the caller's BYE (A5) lists 700
      // still RING: the ring goes on until 700's own BYE, reported alone (A7).
      expect(a.at['captured-30011-A3-ext-ring-with-inbound-alert.json']).toEqual([1, 0]);
      expect(a.at['captured-30011-A5-ext-ring-with-inbound-bye.json']).toEqual([0, 0]);
      expect(a.at['captured-30011-A7-ext-bye-alone.json']).toEqual([0, 1]);
      expect(a.dismisses.map((d) => d.state)).toEqual(['ended']);
    });

    it('B: the 30015 failure (487, the caller listed) ends the ring before 700’s BYE arrives', async () => {
      const b = await replay('B-');
      expect(b.pops).toMatchObject([{ from: '0815550100', to: '700' }]);
      expect(b.at['captured-30015-B6-487-ring-and-inbound-bye.json']).toEqual([0, 1]);
      expect(b.dismisses.map((d) => d.state)).toEqual(['ended']);
    });

    it('C: 700 calling out on two channels, three call records for one call id: nothing pops', async () => {
      const c = await replay('C-');
      expect(c.pops).toEqual([]);
      expect(c.dismisses).toEqual([]);
    });

    it('one-member reports and failures from the code comments decode without a reject', () => {
      const d = new YeastarEventDecoder();
      const out = (name: string) => {
        const r = d.decode(fixture(name), T0, 0);
        expect(r, name).toMatchObject({ ok: true });
        return (r as Extract<DecodeResult, { ok: true }>).envelopes;
      };
      expect(calls(out('captured-30011-D1-ext-answered-alone-outbound.json'))).toMatchObject([
        { call_id: '1702285525.16', to: '703', state: 'answered', from: '' },
      ]);
      // Its call record (BUSY, outbound): no ring to end, no voicemail; the record for History.
      expect(out('captured-30012-D2-outbound-busy.json')).toMatchObject([
        {
          event: 30012,
          data: {
            call_id: '1702285525.16',
            to: '0875550199',
            status: 'BUSY',
            talk_sec: 0,
            duration_sec: 0,
          },
        },
      ]);
      for (const name of [
        'captured-30015-E1-members-null-not-found.json',
        'captured-30015-members-null-not-found.json',
        'captured-30015-E2-486-busy-here-one-member.json',
        'captured-30015-E3-486-busy-here-one-member.json',
      ])
        expect(out(name), name).toEqual([]); // calls never seen ringing: nothing to end
      for (const name of [
        'captured-30011-E4-ext-bye-alone.json',
        'captured-30011-E5-ext-bye-alone.json',
        'captured-30011-F1-inbound-bye-alone-to-6402.json',
      ])
        expect(
          calls(out(name)).map((c) => c.state),
          name,
        ).toEqual(name.includes('inbound') ? [] : ['ended']);
    });
  });

  it('one member a report: 101 rings, answers, hangs up, then its record; a voicemail record; a 486 ends a ring as declined', () => {
    const answered = decodeAll([
      'constructed-30011-inbound-rings-101.json',
      'constructed-30011-101-answer-alone.json',
      'constructed-30011-101-bye-alone.json',
      'constructed-30012-answered-by-101.json',
    ]);
    expect(answered.map((e) => calls(e).map((c) => [c.event, c.to, c.state ?? c.status]))).toEqual([
      [[30011, '101', 'ringing']],
      [[30011, '101', 'answered']],
      [[30011, '101', 'ended']],
      [[30012, '101', 'ANSWERED']],
    ]);
    expect(calls(answered[3]!)[0]).toMatchObject({ talk_sec: 87, duration_sec: 95 });
    // The PBX sent the call to voicemail: the record ends the ring in its words.
    const [, voicemail] = decodeAll([
      'constructed-30011-inbound-rings-101.json',
      'constructed-30012-voicemail-to-101.json',
    ]);
    expect(calls(voicemail!).filter((c) => c.event === 30011)).toMatchObject([
      { to: '101', state: 'voicemail' },
    ]);
    // 700 refused the call (a phone's Decline answers 486 Busy Here): captured E2 ends it declined.
    const [, declined] = decodeAll([
      'constructed-30011-700-ring-alone-E.json',
      'captured-30015-E2-486-busy-here-one-member.json',
    ]);
    expect(calls(declined!)).toMatchObject([{ to: '700', state: 'declined' }]);
  });

  it('decodes every fixture of the folder (none is left unread)', () => {
    expect(readdirSync(DIR).filter((name) => !used.has(name))).toEqual([]);
  });
});

describe('Yeastar P-Series decoding rules beyond the examples', () => {
  const frame = (callId: string, members: unknown[], sn = 'SN1') =>
    JSON.stringify({ type: 30011, sn, msg: JSON.stringify({ call_id: callId, members }) });
  const ext = (number: string, status: string, channel?: string) => ({
    extension: { number, member_status: status, ...(channel ? { channel_id: channel } : {}) },
  });
  const ok = (r: DecodeResult) => (r as Extract<DecodeResult, { ok: true }>).envelopes;

  it('without channel ids, a second ring of the same extension in the same call is a new event', () => {
    const d = new YeastarEventDecoder();
    const first = ok(d.decode(frame('c1', [ext('101', 'RING')]), T0, 0));
    const repeat = ok(d.decode(frame('c1', [ext('101', 'RING')]), T0 + 1, 1));
    ok(d.decode(frame('c1', [ext('101', 'HOLD'), ext('103', 'ANSWER')]), T0 + 2, 2));
    const again = ok(d.decode(frame('c1', [ext('101', 'RING')]), T0 + 3, 3));
    expect(repeat[0]!.event_id).toBe(first[0]!.event_id);
    expect(again[0]!.event_id).not.toBe(first[0]!.event_id);
  });

  it('a new ring leg (new channel) is a new event; the same one repeated is not', () => {
    const d = new YeastarEventDecoder();
    const a = ok(d.decode(frame('c2', [ext('101', 'RING', 'PJSIP/101-1')]), T0, 0));
    const b = ok(d.decode(frame('c2', [ext('101', 'RING', 'PJSIP/101-1')]), T0, 1));
    const c = ok(d.decode(frame('c2', [ext('101', 'RING', 'PJSIP/101-2')]), T0, 2));
    expect(b[0]!.event_id).toBe(a[0]!.event_id);
    expect(c[0]!.event_id).not.toBe(a[0]!.event_id);
  });

  it('the same member state from two PBXs (sn) are different events', () => {
    const a = ok(
      new YeastarEventDecoder().decode(frame('c3', [ext('101', 'RING', 'x')], 'A'), T0, 0),
    );
    const b = ok(
      new YeastarEventDecoder().decode(frame('c3', [ext('101', 'RING', 'x')], 'B'), T0, 0),
    );
    expect(a[0]!.event_id).not.toBe(b[0]!.event_id);
  });

  it('refuses what does not fit, with a reason', () => {
    const d = new YeastarEventDecoder();
    expect(d.decode('x'.repeat(70_000), T0, 0)).toEqual({ ok: false, reason: 'oversized' });
    expect(d.decode('[1,2]', T0, 0)).toEqual({ ok: false, reason: 'not-object' });
    expect(d.decode('{"type":"30011"}', T0, 0)).toMatchObject({ ok: false, detail: 'type' });
    expect(d.decode('{"type":30011,"msg":"{not json"}', T0, 0)).toMatchObject({
      ok: false,
      detail: 'msg',
    });
    expect(d.decode('{"type":30011,"msg":{"call_id":"c"}}', T0, 0)).toMatchObject({
      ok: false,
      detail: 'msg',
    });
    expect(d.decode('{"type":30010,"msg":{"trunk_name":"t","status":"1"}}', T0, 0)).toMatchObject({
      ok: false,
      detail: 'msg',
    });
  });

  it('a member status it does not know is never a ring', () => {
    const d = new YeastarEventDecoder();
    const [e] = ok(d.decode(frame('c4', [ext('101', 'Ringing')]), T0, 0));
    expect(e!.data.state).toBe('unknown');
  });

  it('memory is bounded: at most maxCalls calls are remembered', () => {
    const d = new YeastarEventDecoder({ maxCalls: 10 });
    for (let i = 0; i < 100; i++)
      d.decode(frame(`call-${i}`, [ext('101', 'RING', `c${i}`)]), T0, i);
    expect(d.callsRemembered).toBe(10);
  });
});
