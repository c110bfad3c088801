/**
 * One logging key for a fault, the error itself (issue 37 item 11): the app and the relay log a
 * caught error as `error`, and as the Error, so that the log's own serialisation (src-shared/process/log.ts)
 * keeps its code, its cause chain and its stack, each scrubbed of registered secrets.
 * Before: the direct stream logged `error.message` alone (no code, no cause), and the relay logged
 * its errors under `err`.
 */
import { describe, expect, it } from 'vitest';
import { SecretRegistry, type LogRecord } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { ServiceError } from '../../src-shared/api/service-errors.ts';
import { WebSocketEventSource } from '../../src-main/core/events/ws-source.ts';
import { UserAuthenticator } from '../../src-relay/users/user-auth.ts';
import type { UserStore } from '../../src-relay/users/types.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';

const SECRET = 'hunter2-hunter2-hunter2';

function refused(code: string): Error {
  return Object.assign(new Error(`connect ${code} 10.0.0.1:443 (${SECRET})`), { code });
}

const errorOf = (record: LogRecord | undefined) => record?.error as Record<string, unknown>;

describe('a caught error is logged as itself, under `error`', () => {
  it('the direct stream: a failed token and a socket that cannot be made keep code and cause, scrubbed', async () => {
    const clock = new FakeClock();
    const secrets = new SecretRegistry();
    secrets.add(SECRET);
    const logger = memoryLogger(secrets);
    const source = new WebSocketEventSource({
      baseUrl: 'https://acme.example.com',
      topics: [30011],
      clock,
      logger,
      tokens: {
        getToken: () =>
          Promise.reject(
            new ServiceError({
              kind: 'network',
              message: 'token request failed',
              cause: refused('ECONNRESET'),
            }),
          ),
        invalidate: () => {},
      },
      createSocket: () => {
        throw refused('EACCES');
      },
    });
    source.start();
    await flushMicrotasks();
    const token = errorOf(logger.records.find((r) => r.msg === 'cannot get an access token'));
    expect(token).toMatchObject({ message: 'token request failed' });
    expect(token.cause).toMatchObject({ code: 'ECONNRESET', message: expect.any(String) });
    expect(JSON.stringify(logger.records)).not.toContain(SECRET);
    await source.stop();

    const second = memoryLogger(secrets);
    const other = new WebSocketEventSource({
      baseUrl: 'https://acme.example.com',
      topics: [30011],
      clock,
      logger: second,
      tokens: {
        getToken: async () => ({ value: 'tok-1', expiresAt: clock.now() + 3600_000 }),
        invalidate: () => {},
      },
      createSocket: () => {
        throw refused('EACCES');
      },
    });
    other.start();
    await flushMicrotasks();
    const socket = errorOf(second.records.find((r) => r.msg === 'cannot create socket'));
    expect(socket).toMatchObject({ code: 'EACCES', stack: expect.stringContaining('Error') });
    expect(JSON.stringify(second.records)).not.toContain(SECRET);
    await other.stop();
  });

  it('the relay: a users store that fails is logged as `error`, with its code', async () => {
    const logger = memoryLogger();
    const users = {
      findDevice: () => Promise.reject(refused('ECONNREFUSED')),
    } as unknown as UserStore;
    const auth = new UserAuthenticator({ users, logger });
    expect((await auth.authenticate('acme', 'sprd_0123456789abcdef')).ok).toBe(false);
    const record = logger.records.find((r) => r.msg === 'users store unreachable');
    expect(record).not.toHaveProperty('err');
    expect(errorOf(record)).toMatchObject({ code: 'ECONNREFUSED', name: 'Error' });
  });
});
