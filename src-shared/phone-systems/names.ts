/**
 * Which phone system's wire format the connection speaks: the standard service of
 * docs/wire-protocol.md, or Yeastar's P-Series PBX (docs/phone-systems/yeastar-p-series.md).
 */
export type PhoneSystem = 'standard' | 'yeastar-p-series';
export const PHONE_SYSTEMS: readonly PhoneSystem[] = ['standard', 'yeastar-p-series'];
