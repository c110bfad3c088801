import { describe, expect, it } from 'vitest';
import { relayFilterFor } from '../../src-main/core/relay-client/filter.ts';
import {
  NumberSet,
  compareCursors,
  decodeControl,
  encodeControl,
  parseClientMessage,
  sanitiseFilter,
} from '../../src-shared/relay/relay-protocol.ts';

describe('relay client protocol', () => {
  it('tells control frames from event bodies without parsing bodies', () => {
    expect(decodeControl(encodeControl({ type: 'cursor', cursor: '1-2' }))).toEqual({
      type: 'cursor',
      cursor: '1-2',
    });
    expect(decodeControl('{"event":30011,"type":"relay "}')).toBeNull();
    expect(decodeControl(' {"event":30011}')).toBeNull();
    expect(decodeControl('relay {not json')).toMatchObject({ type: 'error' });
  });

  it('validates hellos at the boundary', () => {
    expect(
      parseClientMessage('{"type":"hello","v":1,"filter":{"extensions":["101"]},"cursor":null}'),
    ).toEqual({
      type: 'hello',
      v: 1,
      filter: { extensions: ['101'], dids: [], events: [] },
      cursor: null,
    });
    expect(parseClientMessage('{"type":"hello","v":2,"filter":{}}')).toEqual({
      error: 'unsupported protocol version',
    });
    expect(
      parseClientMessage('{"type":"hello","v":1,"filter":{"extensions":["<script>"]}}'),
    ).toEqual({ error: 'filter malformed' });
    expect(parseClientMessage('{"type":"hello","v":1,"filter":{"events":[1.5]}}')).toEqual({
      error: 'filter malformed',
    });
    expect(
      parseClientMessage(
        `{"type":"hello","v":1,"filter":{"extensions":${JSON.stringify(Array.from({ length: 201 }, (_, i) => String(i)))}}}`,
      ),
    ).toEqual({ error: 'filter malformed' });
    expect(parseClientMessage('{"type":"hello","v":1,"filter":{},"cursor":"abc"}')).toEqual({
      error: 'cursor malformed',
    });
    expect(parseClientMessage('heartbeat')).toEqual({ error: 'frame is not JSON' });
    expect(parseClientMessage('{"type":"heartbeat"}')).toEqual({ type: 'heartbeat' });
  });

  it('orders cursors numerically', () => {
    expect(compareCursors('9-0', '10-0')).toBe(-1);
    expect(compareCursors('10-2', '10-10')).toBe(-1);
    expect(compareCursors('10-10', '10-10')).toBe(0);
    expect(compareCursors('1795311835277-1', '1795311835277-0')).toBe(1);
  });

  it('matches national and international forms of a DID, not other numbers', () => {
    const set = new NumberSet(['+1 (415) 555-0100', '42']);
    expect(set.has('+14155550100')).toBe(true);
    expect(set.has('4155550100')).toBe(true);
    expect(set.has('14155550100')).toBe(true);
    expect(set.has('42')).toBe(true);
    expect(set.has('4155550199')).toBe(false);
    expect(set.has('555')).toBe(false);
    expect(set.has('')).toBe(false);
  });

  it('builds a filter from user numbers, trunk-prefixed national forms included', () => {
    const filter = relayFilterFor(
      { extensions: ['101', ' 101 '], dids: ['+44 20 7946 0000'], defaultRegion: 'GB' },
      [30009],
    );
    expect(filter.extensions).toEqual(['101']);
    expect(filter.events).toEqual([30009]);
    expect(new NumberSet(filter.dids).has('020 7946 0000')).toBe(true);
    expect(new NumberSet(filter.dids).has('+442079460000')).toBe(true);
  });

  it('drops filter entries the relay would refuse instead of failing the hello', () => {
    const { filter, dropped } = sanitiseFilter({
      extensions: ['101', '<b>', 'x'.repeat(50)],
      dids: [' +1 415 555 0100 '],
      events: [30011, 0.5],
    });
    expect(filter).toEqual({ extensions: ['101'], dids: ['+1 415 555 0100'], events: [30011] });
    expect(dropped).toBe(3);
    expect(
      'error' in parseClientMessage(JSON.stringify({ type: 'hello', v: 1, filter, cursor: null })),
    ).toBe(false);
  });
});
