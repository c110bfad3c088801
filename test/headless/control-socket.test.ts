/**
 * The runner's control socket (src-main/headless/control-socket.ts): served only in a folder the
 * user alone may enter, the socket itself 0600, one request and one answer, the answer validated
 * at the client's boundary; a folder open to others is never used by either side.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  controlPlace,
  dialThroughRunner,
  parseControlAnswer,
  serveControl,
  type ControlServer,
} from '../../src-main/headless/control-socket.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { callRefusal } from '../../src-shared/api/call-api.ts';

const dirs: string[] = [];
const servers: ControlServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function runtime(mode = 0o700): string {
  const dir = mkdtempSync(join(tmpdir(), 'dial-core-ctl-'));
  chmodSync(dir, mode);
  dirs.push(dir);
  return dir;
}

const SETTINGS = { phoneSystem: 'yeastar-p-series' as const, baseUrl: 'https://pbx', apiKey: 'k' };

describe('the control socket', () => {
  it('answers a dial with the runner CallControl result; the socket is 0600 in a 0700 folder', async () => {
    const place = controlPlace(SETTINGS, { XDG_RUNTIME_DIR: runtime() })!;
    const asked: string[] = [];
    const server = await serveControl({
      place,
      clock: systemClock,
      logger: memoryLogger(),
      dial: async (n) => (asked.push(n), { ok: true, callId: '1648627871.66' }),
    });
    servers.push(server!);
    expect(statSync(place.path).mode & 0o777).toBe(0o600);
    expect(statSync(place.dir).mode & 0o777).toBe(0o700);
    expect(await dialThroughRunner(place, '2008', systemClock)).toEqual({
      ok: true,
      callId: '1648627871.66',
    });
    expect(asked).toEqual(['2008']);
    // Another runner of the same settings does not serve it a second time.
    expect(
      await serveControl({
        place,
        clock: systemClock,
        logger: memoryLogger(),
        dial: async () => ({ ok: true }),
      }),
    ).toBeNull();
  });

  it('a refusal crosses with its words', async () => {
    const place = controlPlace(SETTINGS, { XDG_RUNTIME_DIR: runtime() })!;
    servers.push(
      (await serveControl({
        place,
        clock: systemClock,
        logger: memoryLogger(),
        dial: async () => callRefusal('permission'),
      }))!,
    );
    expect(await dialThroughRunner(place, '2008', systemClock)).toMatchObject({
      ok: false,
      refusal: 'permission',
      words: [{ id: 'status.call.refused.permission' }],
    });
  });

  it('a folder open to other users is used by neither side; nobody listening is "no runner"', async () => {
    const open = controlPlace(SETTINGS, { XDG_RUNTIME_DIR: runtime() })!;
    // The screenpop folder exists and is open to others (someone made it first).
    mkdirSync(open.dir, { mode: 0o777 });
    chmodSync(open.dir, 0o777);
    expect(
      await serveControl({
        place: open,
        clock: systemClock,
        logger: memoryLogger(),
        dial: async () => ({ ok: true }),
      }),
    ).toBeNull();
    expect(await dialThroughRunner(open, '2008', systemClock)).toBeUndefined();
    const none = controlPlace(SETTINGS, { XDG_RUNTIME_DIR: runtime() })!;
    expect(await dialThroughRunner(none, '2008', systemClock)).toBeUndefined();
  });

  it('answers are validated: unknown refusals, phrase ids or call ids are not taken', () => {
    expect(parseControlAnswer('{"ok":true,"callId":"1.2"}')).toEqual({ ok: true, callId: '1.2' });
    expect(parseControlAnswer('{"ok":true,"callId":"1.2\\n<x>"}')).toBeUndefined();
    expect(
      parseControlAnswer(
        '{"ok":false,"refusal":"boom","words":[{"id":"status.call.refused.refused"}]}',
      ),
    ).toBeUndefined();
    expect(
      parseControlAnswer('{"ok":false,"refusal":"refused","words":[{"id":"not.a.message"}]}'),
    ).toBeUndefined();
    expect(parseControlAnswer('not json')).toBeUndefined();
    expect(controlPlace(SETTINGS, {}, 'win32', 1000)).toBeNull();
  });
});
