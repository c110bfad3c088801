/**
 * The service's paths, once (src-shared/api/service-api.ts): the app's client and socket, the relay's
 * token check and the simulator all build or serve them from this list.
 */
import { describe, expect, it } from 'vitest';
import { API_PATHS, serviceUrl } from '../../src-shared/api/service-api.ts';
import { subscribeUrl } from '../../src-shared/wire/standard.ts';

describe('serviceUrl', () => {
  it("keeps the tenant's base path and drops a query and a fragment", () => {
    expect(serviceUrl('https://pbx.example/t/acme/?x=1#y', API_PATHS.getToken).href).toBe(
      'https://pbx.example/t/acme/openapi/v1.0/get_token',
    );
    expect(serviceUrl('http://127.0.0.1:8080', API_PATHS.extensionList).href).toBe(
      'http://127.0.0.1:8080/openapi/v1.0/extension/list',
    );
  });

  it('turns http(s) into ws(s) for the socket, and refuses anything else', () => {
    expect(subscribeUrl('https://pbx.example/t/acme')).toBe(
      'wss://pbx.example/t/acme/openapi/v1.0/subscribe',
    );
    expect(subscribeUrl('http://127.0.0.1:8080/')).toBe(
      'ws://127.0.0.1:8080/openapi/v1.0/subscribe',
    );
    expect(() => serviceUrl('ftp://pbx.example', API_PATHS.subscribe, { ws: true })).toThrow(
      /http/,
    );
  });
});
