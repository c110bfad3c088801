import { execFile } from 'node:child_process';

/**
 * Runs one of Windows' own tools (reg.exe, powershell.exe) by its full path, without a shell, and
 * gives its stdout as text. A non-zero exit, a time-out or too much output rejects with Node's
 * error (its `code` the exit code) carrying the tool's `stderr`, for the log line that says why.
 */
export function runSystemTool(
  file: string,
  args: string[],
  options: { env?: Record<string, string>; timeoutMs: number; maxBytes: number },
): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      file,
      args,
      {
        ...(options.env ? { env: options.env } : {}),
        windowsHide: true,
        timeout: options.timeoutMs,
        maxBuffer: options.maxBytes,
        encoding: 'utf8',
      },
      (err, stdout, stderr) =>
        err ? reject(Object.assign(err, { stderr: String(stderr) })) : resolve(stdout),
    ),
  );
}
