/**
 * Which phone system's wire format the connection speaks: the standard service of
 * docs/wire-protocol.md, or Yeastar's P-Series PBX (docs/phone-systems/yeastar-p-series.md).
 */
export const PHONE_SYSTEMS = ['standard', 'yeastar-p-series'] as const;
export type PhoneSystem = (typeof PHONE_SYSTEMS)[number];

/** True for the id of a phone system Screenpop speaks (a flag, a config file, a setting). */
export function isPhoneSystem(text: unknown): text is PhoneSystem {
  return (PHONE_SYSTEMS as readonly unknown[]).includes(text);
}

/** The ids as a usage line or an error says them: `standard|yeastar-p-series` with `|`. */
export function phoneSystemsJoined(separator: string, quote = ''): string {
  return PHONE_SYSTEMS.map((s) => `${quote}${s}${quote}`).join(separator);
}
