/**
 * Windows: the policy can also come from the registry, where Group Policy puts what a domain's
 * administrators push: the value `Policy` (REG_SZ, the same JSON document as policy.json) under
 * `HKLM\SOFTWARE\Policies\Screenpop`. Read with Windows' own reg.exe through execFile (no shell,
 * no native module), by its fixed full path (not looked up on PATH, not from the environment), in
 * the 64-bit view.
 */
import { runSystemTool } from './system-tool.ts';

/**
 * Windows' system folder, fixed: never from %SystemRoot% or %windir%, which any user may set for the
 * programs they start (and so run a reg.exe or powershell.exe of their own that answers with a
 * policy of theirs, or calls a planted one trusted). The OS's own answer (GetSystemDirectoryW) is
 * not reachable from Node without a native module, so this is Windows' default folder, the one
 * every supported Windows installs to unless set up otherwise (README: a Windows elsewhere).
 */
export const SYSTEM32 = 'C:\\Windows\\System32';
/** reg.exe in the system folder. */
export const REG_EXE = `${SYSTEM32}\\reg.exe`;
export const REGISTRY_KEY = 'HKLM\\SOFTWARE\\Policies\\Screenpop';
export const REGISTRY_VALUE = 'Policy';

/** The `Policy` value's text from `reg query` output; null when the output has none. */
export function parseRegQuery(output: string): string | null {
  for (const line of output.split(/\r?\n/)) {
    const m = /^\s+(\S(?:.*?\S)?)\s{4}(REG_SZ|REG_EXPAND_SZ)\s{4}(.*)$/.exec(line);
    if (m && m[1]?.toLowerCase() === REGISTRY_VALUE.toLowerCase()) return m[3] ?? '';
  }
  return null;
}

/** Runs a program with arguments and gives its stdout; rejects with `code` on a non-zero exit. */
export type ExecFileText = (file: string, args: string[]) => Promise<string>;

const realExec: ExecFileText = (file, args) =>
  runSystemTool(file, args, { timeoutMs: 5000, maxBytes: 1024 * 1024 });

/**
 * The registry policy's JSON text, `null` when there is none (no key or value: reg.exe exits 1),
 * or an Error when reg.exe could not be run at all.
 */
export async function readRegistryPolicy(
  exec: ExecFileText = realExec,
): Promise<string | null | Error> {
  try {
    return parseRegQuery(
      await exec(REG_EXE, ['query', REGISTRY_KEY, '/v', REGISTRY_VALUE, '/reg:64']),
    );
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 1) return null;
    return err instanceof Error ? err : new Error(String(err));
  }
}
