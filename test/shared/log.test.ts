import { describe, expect, it } from 'vitest';
import { memoryLogger, REDACTED, SecretRegistry } from '../../src-shared/log.ts';

describe('logger redaction', () => {
  it('scrubs registered secrets from messages and nested fields', () => {
    const secrets = new SecretRegistry();
    secrets.add('s3cr3t-api-secret');
    secrets.add('tok_abcdef123456');
    const log = memoryLogger(secrets);
    log.warn('refresh failed for tok_abcdef123456', {
      detail: { body: 'password was s3cr3t-api-secret', list: ['x tok_abcdef123456 y'] },
    });
    const line = JSON.stringify(log.records);
    expect(line).not.toContain('s3cr3t-api-secret');
    expect(line).not.toContain('tok_abcdef123456');
    expect(log.records[0]?.msg).toBe(`refresh failed for ${REDACTED}`);
  });

  it('masks fields named like secrets whatever their value, and bearer/query tokens in text', () => {
    const log = memoryLogger();
    log.info('connect', {
      access_token: 'short',
      headers: { Authorization: 'Bearer abc.def' },
      url: 'wss://x/subscribe?access_token=zzz&a=1',
      note: 'sent Bearer eyJhbGciOi.payload.sig',
    });
    const r = log.records[0]!;
    expect(r.access_token).toBe(REDACTED);
    expect((r.headers as Record<string, unknown>).Authorization).toBe(REDACTED);
    expect(r.url).toBe(`wss://x/subscribe?access_token=${REDACTED}&a=1`);
    expect(r.note).toBe(`sent Bearer ${REDACTED}`);
  });

  it('keeps errors readable without leaking', () => {
    const secrets = new SecretRegistry();
    secrets.add('hunter2hunter2');
    const log = memoryLogger(secrets);
    log.error('boom', { err: new Error('bad secret hunter2hunter2') });
    expect(log.records[0]?.err).toEqual({ name: 'Error', message: `bad secret ${REDACTED}` });
  });
});
