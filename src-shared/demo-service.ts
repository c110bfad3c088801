/**
 * What the app needs of the demo: a simulator of the phone system on this computer (src-sim/demo.ts
 * starts one; the tray app's composition root and the headless runner use it through the core's
 * port, core/ports/ports.ts). Shared because both sides name it and neither may import the other.
 * Its key and secret are made up and kept in memory only, never the keychain: they die with the
 * process.
 */
import type { PhoneSystem } from './phone-systems/names.ts';

export interface DemoService {
  baseUrl: string;
  apiKey: string;
  secret: string;
  /** The simulator's tenant: its name on a relay (set as relayTenant, its address being 127.0.0.1). */
  tenant: string;
  /** The extension the demo user answers. */
  extension: string;
  /** The phone system the simulator speaks (src-main/core/settings/types.ts); standard if absent. */
  phoneSystem?: PhoneSystem;
  close(): Promise<void>;
}
