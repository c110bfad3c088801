/**
 * The runner's stdout: exactly one JSON object per line, nothing else (logs go to stderr). The
 * line shapes are a public interface, documented in README.md beside this file: add fields, never
 * rename or remove them.
 */
import type { ConnectionStatus } from '../core/events/contracts.ts';
import type { Dismiss, Pop } from '../core/events/pipeline.ts';
import type { Fault } from '../../src-shared/last-resort.ts';

export interface StatusLine {
  type: 'status';
  state: ConnectionStatus['state'];
  reason: string | null;
  remedy: string | null;
  errcode: number | null;
}

export interface PopLine {
  type: 'pop';
  call_id: string;
  from: string;
  /** True when the caller ID was longer than 256 characters and `from` is only its start. */
  from_truncated: boolean;
  to: string;
  event_id: string;
  caller_name: string | null;
  /** Server time of the ring, ms since the epoch. */
  timestamp: number;
}

export interface DismissLine {
  type: 'dismiss';
  call_id: string;
  state: string;
  to: string;
  event_id: string;
}

/** Something unexpected went wrong inside the runner; it carried on and rebuilt its connection. */
export interface FaultLine {
  type: 'fault';
  /** Where it was caught: `timer`, `uncaughtException`, `unhandledRejection`. */
  origin: string;
  /** The error's name and first line, secrets scrubbed. */
  message: string;
  /** Faults since the runner started, this one included. */
  count: number;
}

export type OutputLine = StatusLine | PopLine | DismissLine | FaultLine;

export function statusLine(s: ConnectionStatus): StatusLine {
  return {
    type: 'status',
    state: s.state,
    reason: s.reason ?? null,
    remedy: s.remedy ?? null,
    errcode: s.errcode ?? null,
  };
}

export function popLine(p: Pop, callerName: string | null): PopLine {
  return {
    type: 'pop',
    call_id: p.callId,
    from: p.from,
    from_truncated: p.fromTruncated === true,
    to: p.to,
    event_id: p.eventId,
    caller_name: callerName,
    timestamp: p.timestamp,
  };
}

export function dismissLine(d: Dismiss): DismissLine {
  return { type: 'dismiss', call_id: d.callId, state: d.state, to: d.to, event_id: d.eventId };
}

export function faultLine(f: Fault): FaultLine {
  return { type: 'fault', origin: f.origin, message: f.message, count: f.count };
}

/** JSON.stringify escapes control characters and U+2028/9, so caller data cannot break a line. */
export function formatLine(line: OutputLine): string {
  return (
    JSON.stringify(line)
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029') + '\n'
  );
}
