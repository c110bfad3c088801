import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { EventPipeline, type Notice } from '../../src-main/core/events/pipeline.ts';
import { featureStatuses, topicsFor } from '../../src-main/core/events/features.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const USER = { extensions: ['101'], dids: ['(415) 555-0100'], defaultRegion: 'US' };
const HOUR = 60 * 60_000;

function setup(opts: { staleNoticeMs?: number } = {}) {
  const clock = new FakeClock();
  const logger = memoryLogger();
  const pipeline = new EventPipeline({ clock, logger, user: USER, ...opts });
  const notices: Notice[] = [];
  pipeline.onNotice((n) => notices.push(n));
  let seq = 0;
  const frame = (
    event: number,
    data: Record<string, unknown>,
    o: { agoMs?: number; id?: string } = {},
  ) =>
    JSON.stringify({
      event,
      timestamp: clock.now() - (o.agoMs ?? 0),
      tenant: 'acme',
      event_id: o.id ?? `e${++seq}`,
      data,
    });
  const feed = (text: string, source = 'direct') =>
    pipeline.ingest(text, { source, receivedAt: clock.now() });
  const vm = (data: Record<string, unknown> = {}, o: { agoMs?: number; id?: string } = {}) =>
    frame(
      30015,
      { voicemail_id: 'v1', extension: '101', from: '+4930123456', duration_sec: 42, ...data },
      o,
    );
  const sms = (data: Record<string, unknown> = {}, o: { agoMs?: number; id?: string } = {}) =>
    frame(
      30031,
      { message_id: 'm1', from: '+4930123456', to: '+14155550100', text: 'hi', ...data },
      o,
    );
  return { clock, logger, pipeline, notices, frame, feed, vm, sms };
}

const HOSTILE = [
  '\u202Egnp.exe\u202C',
  '<img src=x onerror=alert(1)><script>alert(1)</script>',
  'zero\u200Bwidth\uFEFF',
  'https://evil.example/login?x=1',
  '\uD800 lone surrogate',
];

describe('voicemail, SMS, trunk and presence through the pipeline', () => {
  it('a voicemail for my extension is one notice; another extension is none', () => {
    const t = setup();
    t.feed(t.vm({ caller_name: 'Ada' }));
    t.feed(t.vm({ voicemail_id: 'v2', extension: '102' }));
    expect(t.notices).toEqual([
      expect.objectContaining({
        type: 'voicemail',
        voicemailId: 'v1',
        extension: '101',
        from: '+4930123456',
        callerName: 'Ada',
        durationSec: 42,
        notify: true,
      }),
    ]);
  });

  it('dedupes a voicemail and an SMS by their own id, whatever the event_id (relay replay, reconnect)', () => {
    const t = setup();
    t.feed(t.vm({}, { id: 'a' }));
    t.feed(t.vm({}, { id: 'b' }), 'relay');
    t.feed(t.sms({}, { id: 'c' }));
    t.feed(t.sms({}, { id: 'd' }), 'relay');
    t.feed(t.sms({}, { id: 'c' }));
    expect(t.notices.map((n) => n.type)).toEqual(['voicemail', 'sms']);
    expect(t.pipeline.stats()).toMatchObject({ notices: 2, duplicates: 1 });
  });

  it('an SMS or voicemail older than an hour (by the server clock) is history, not a notification', () => {
    const t = setup();
    // The server's clock reads the same as ours; the replayed events are 61 minutes old.
    t.pipeline.noteServerTime(t.clock.now(), t.clock.monotonic());
    t.feed(t.sms({ message_id: 'old' }, { agoMs: HOUR + 60_000 }));
    t.feed(t.vm({ voicemail_id: 'old' }, { agoMs: HOUR + 60_000 }));
    t.feed(t.sms({ message_id: 'new' }, { agoMs: 59 * 60_000 }));
    expect(t.notices.map((n) => [n.type, 'notify' in n && n.notify])).toEqual([
      ['sms', false],
      ['voicemail', false],
      ['sms', true],
    ]);
    expect(t.pipeline.stats().staleNotices).toBe(2);
  });

  it('a desktop clock hours off changes nothing: age is judged against the server', () => {
    const t = setup();
    // The desktop's clock is 5 hours ahead of the server's.
    t.pipeline.noteServerTime(t.clock.now() - 5 * HOUR, t.clock.monotonic());
    t.feed(t.sms({}, { agoMs: 5 * HOUR + 1000 }));
    expect(t.notices).toMatchObject([{ type: 'sms', notify: true }]);
  });

  it('SMS to my DID in another format or to my extension notifies; to others not', () => {
    const t = setup();
    t.feed(t.sms({ message_id: 'a', to: '4155550100' }));
    t.feed(t.sms({ message_id: 'b', to: '101' }));
    t.feed(t.sms({ message_id: 'c', to: '+14155550101' }));
    expect(t.notices.map((n) => (n.type === 'sms' ? n.messageId : ''))).toEqual(['a', 'b']);
  });

  it('caps SMS text at 1,600 code points (flagged) and a caller ID at 256', () => {
    const t = setup();
    t.feed(t.sms({ text: '😀'.repeat(1600) }));
    t.feed(t.sms({ message_id: 'm2', text: 'x'.repeat(1601), from: '9'.repeat(300) }));
    const [a, b] = t.notices;
    expect(a).toMatchObject({ type: 'sms' });
    expect(a && 'textTruncated' in a).toBe(false);
    expect(b).toMatchObject({ textTruncated: true, fromTruncated: true });
    expect(b?.type === 'sms' && [b.text.length, b.from.length]).toEqual([1600, 256]);
  });

  it('hostile text in every field is carried as data (well-formed), never a crash', () => {
    const t = setup();
    for (const [i, bad] of HOSTILE.entries()) {
      t.feed(t.sms({ message_id: `s${i}`, text: bad, from: bad }));
      t.feed(t.vm({ voicemail_id: `v${i}`, from: bad, caller_name: bad }));
      t.feed(t.frame(30007, { trunk: bad, status: 'unregistered' }));
    }
    expect(t.notices).toHaveLength(HOSTILE.length * 3);
    const lone = t.notices.filter((n) => n.type === 'sms').at(-1);
    expect(lone?.type === 'sms' && lone.text).toBe('\uFFFD lone surrogate');
  });

  it('rejects payloads that do not fit (counted, no notice, no clock sample), and never throws', () => {
    const t = setup();
    const bad: Array<[number, Record<string, unknown>]> = [
      [30015, { extension: '101', from: '+1' }],
      [30015, { voicemail_id: 'x'.repeat(129), extension: '101', from: '+1' }],
      [30015, { voicemail_id: 'v', extension: 101, from: '+1' }],
      [30015, { voicemail_id: 'v', extension: '101', from: null }],
      [30031, { message_id: 'm', from: '+1', to: '101', text: 7 }],
      [30031, { message_id: 'm', from: '+1', to: '', text: 'x' }],
      [30031, { message_id: ['m'], from: '+1', to: '101', text: 'x' }],
      [30007, { trunk: 'T' }],
      [30007, { trunk: 'T', status: 'x'.repeat(65) }],
      [30009, { extension: '101', presence_status: { a: 1 } }],
    ];
    for (const [code, data] of bad) t.feed(t.frame(code, data));
    expect(t.notices).toEqual([]);
    expect(t.pipeline.stats().rejected['bad-notice-data']).toBe(bad.length);
    expect(t.pipeline.stats().clockOffsetMs).toBeNull();
  });

  it('a voicemail with a missing name or an impossible duration still notifies, without them', () => {
    const t = setup();
    t.feed(t.vm({ voicemail_id: 'a', caller_name: '  ', duration_sec: -1 }));
    t.feed(t.vm({ voicemail_id: 'b', duration_sec: 'forty' }));
    t.feed(t.vm({ voicemail_id: 'c', duration_sec: 1e12 }));
    expect(t.notices.map((n) => n.type === 'voicemail' && [n.callerName, n.durationSec])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
  });

  it('trunk status per trunk: a notice per change, replays and older states ignored', () => {
    const t = setup();
    const trunk = (name: string, status: string, agoMs = 0) =>
      t.feed(t.frame(30007, { trunk: name, status }, { agoMs }));
    trunk('SIP-Main', 'registered');
    trunk('SIP-Backup', 'unreachable');
    trunk('SIP-Main', 'unregistered');
    trunk('SIP-Main', 'unregistered'); // no change
    trunk('SIP-Main', 'registered', 60_000); // older than what is known: a replay
    expect(t.pipeline.trunksDown()).toEqual(['SIP-Backup', 'SIP-Main']);
    trunk('SIP-Main', 'registered');
    trunk('SIP-Backup', 'registered');
    expect(
      t.notices.map((n) => n.type === 'trunk' && [n.trunk, n.registered, n.down.join()]),
    ).toEqual([
      ['SIP-Main', true, ''],
      ['SIP-Backup', false, 'SIP-Backup'],
      ['SIP-Main', false, 'SIP-Backup,SIP-Main'],
      ['SIP-Main', true, 'SIP-Backup'],
      ['SIP-Backup', true, ''],
    ]);
  });

  it('presence of my extension only, one notice per change, older ones ignored', () => {
    const t = setup();
    const presence = (ext: string, status: string, agoMs = 0) =>
      t.feed(t.frame(30009, { extension: ext, presence_status: status }, { agoMs }));
    presence('102', 'away');
    presence('101', 'do_not_disturb');
    presence('101', 'do_not_disturb');
    presence('101', 'available', 5_000);
    presence('101', 'a_status_nobody_knew');
    expect(t.notices.map((n) => n.type === 'presence' && n.status)).toEqual([
      'do_not_disturb',
      'a_status_nobody_knew',
    ]);
  });

  it('remembers at most 10,000 voicemail/SMS ids (memory bound), oldest forgotten first', () => {
    const t = setup();
    for (let i = 0; i < 10_050; i++) t.feed(t.sms({ message_id: `m${i}` }));
    t.feed(t.sms({ message_id: 'm10049' }, { id: 'again-new' }));
    t.feed(t.sms({ message_id: 'm0' }, { id: 'again-old' }));
    expect(t.notices).toHaveLength(10_051);
  });
});

describe('features', () => {
  it('subscribes to calls and the codes of the features that are on', () => {
    expect(topicsFor({ voicemail: true, sms: false, trunk: true, presence: false })).toEqual([
      30011, 30015, 30007,
    ]);
  });

  it('a refused code turns off its feature alone, with the remedy naming its scope', () => {
    const all = { voicemail: true, sms: true, trunk: true, presence: false };
    const statuses = featureStatuses(all, [30031]);
    expect(statuses.map((s) => [s.feature, s.state])).toEqual([
      ['voicemail', 'on'],
      ['sms', 'no-scope'],
      ['trunk', 'on'],
      ['presence', 'off'],
    ]);
    expect(statuses[1]).toMatchObject({
      reason: 'SMS is off: the key may not receive event code 30031.',
      remedy: expect.stringContaining('event:30031'),
    });
  });
});
