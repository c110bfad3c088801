import { describe, expect, it } from 'vitest';
import { joinNegativeNumbers, valueOptionsOf } from '../../src-shared/process/cli-args.ts';

describe('joinNegativeNumbers', () => {
  const options = valueOptionsOf({
    port: { type: 'string' },
    'stale-ring-sec': { type: 'string' },
    demo: { type: 'boolean' },
  });

  it('joins a negative number to the flag that takes it, so the flag’s own rule judges it', () => {
    expect(joinNegativeNumbers(['--port', '-1', '--stale-ring-sec', '-0.5'], options)).toEqual([
      '--port=-1',
      '--stale-ring-sec=-0.5',
    ]);
  });

  it('leaves flags, boolean flags and flags with a value already alone', () => {
    expect(joinNegativeNumbers(['--demo', '-1'], options)).toEqual(['--demo', '-1']);
    expect(joinNegativeNumbers(['--port', '--demo'], options)).toEqual(['--port', '--demo']);
    expect(joinNegativeNumbers(['--port=-1', '-h'], options)).toEqual(['--port=-1', '-h']);
    expect(joinNegativeNumbers(['--unknown', '-1'], options)).toEqual(['--unknown', '-1']);
  });
});
