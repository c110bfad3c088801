/** The wire format of each phone system Screenpop speaks (README.md beside this file). */
import type { PhoneSystem } from '../phone-systems/names.ts';
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
