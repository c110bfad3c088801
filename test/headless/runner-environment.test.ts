import { describe, expect, it } from 'vitest';
import { runnerEnvironment } from '../../src-main/headless/runner-environment.ts';

describe("the runner's environment, read once at its entry", () => {
  it('the key, the secret and the CRM token as values; the proxy variables in either case; the runtime folder (the control socket of dial); nothing else', () => {
    const env = runnerEnvironment({
      SCREENPOP_API_KEY: '  key-1 ',
      SCREENPOP_API_SECRET: ' s3cret ',
      SCREENPOP_CRM_TOKEN: ' pat-na1 ',
      SCREENPOP_CRM_LOG_SECRET: ' whsec-1 ',
      https_proxy: 'http://proxy.corp:3128',
      NO_PROXY: '.corp',
      HOME: '/home/agent',
      PATH: '/usr/bin',
      XDG_RUNTIME_DIR: '/run/user/1000',
    });
    expect(env).toEqual({
      apiKey: 'key-1',
      // The secret as given (a secret may hold spaces); the key and the token trimmed, as before.
      apiSecret: ' s3cret ',
      crmToken: 'pat-na1',
      crmLogSecret: 'whsec-1',
      proxyVariables: { https_proxy: 'http://proxy.corp:3128', NO_PROXY: '.corp' },
      runtimeDir: '/run/user/1000',
    });
    expect(runnerEnvironment({})).toEqual({
      apiKey: '',
      apiSecret: '',
      crmToken: '',
      crmLogSecret: '',
      proxyVariables: {},
      runtimeDir: '',
    });
  });
});
