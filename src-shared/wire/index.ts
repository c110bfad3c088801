/** The wire format of each phone system Screenpop speaks (README.md beside this file). */
import { PHONE_SYSTEMS, type PhoneSystem } from '../phone-systems/names.ts';
import type { NoticeFeature } from './event-codes.ts';
import type { PhoneSystemWire } from './phone-system.ts';
import { STANDARD_WIRE } from './standard.ts';
import { YEASTAR_P_SERIES_WIRE } from './yeastar-p-series.ts';

export type { ApiDialect, PhoneSystemWire, StreamDialect } from './phone-system.ts';

const WIRES: Readonly<Record<PhoneSystem, PhoneSystemWire>> = {
  standard: STANDARD_WIRE,
  'yeastar-p-series': YEASTAR_P_SERIES_WIRE,
};

/** The wire format of `system` (the standard service's for anything unknown). */
export function wireFor(system: PhoneSystem | undefined): PhoneSystemWire {
  return (system && WIRES[system]) ?? STANDARD_WIRE;
}

/**
 * The notice features each phone system has no event for (its `featureCodes` say null): what the
 * Settings window shows as not offered. Sent by main in the settings view, because the windows may
 * not load the wire (its decoders need Node).
 */
export function featuresNotOffered(): Record<PhoneSystem, NoticeFeature[]> {
  const out = {} as Record<PhoneSystem, NoticeFeature[]>;
  for (const id of PHONE_SYSTEMS) {
    const codes = WIRES[id].featureCodes;
    out[id] = (Object.keys(codes) as NoticeFeature[]).filter((f) => codes[f] === null);
  }
  return out;
}
