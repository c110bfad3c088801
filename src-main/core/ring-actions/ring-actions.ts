/**
 * The administrator's actions when a call starts ringing for the user (policy.ts `onRing`): open
 * a link, or run a program with an argument list. Only a policy can define them (settings.json
 * cannot: the user's settings have no such field). Caller ID is chosen by the caller, so:
 * - a link is built by the CRM link's builder (crm-url.ts): every value encodeURIComponent'd,
 *   placeholders only after the host, the result through the one URL gate;
 * - a program gets an argument list (never a shell, never one command line): each placeholder is
 *   replaced inside its own argument, so a value can never become a second argument or a shell
 *   command; control characters are removed, and an argument the administrator did not start
 *   with "-" or "/" never starts with one, so that a value cannot pass for an option;
 * - programs are bounded (program-runner.ts): a few at once, each stopped with what it started
 *   after a time-out, all stopped when the app or the runner stops.
 * An action that fails is logged and the others still run; the pop itself never waits on them.
 */
import type { Logger } from '../../../src-shared/process/log.ts';
import type { RingAction } from '../settings/policy.ts';
import { buildCrmUrl, type CrmValues } from '../links/crm-url.ts';
import { CALL_PLACEHOLDERS, fillPlaceholders } from '../crm/placeholders.ts';
import type { UrlOpener } from '../ports/ports.ts';
import { displayText } from '../../../src-shared/ui/text.ts';

/**
 * Starts a program with an argument list, without a shell, within limits (program-runner.ts is
 * the real one: at most a few at once, each stopped with what it started after a time-out).
 */
export interface ProgramRunner {
  run(program: string, args: readonly string[]): void;
  /** Stops every program still running (and what each started); resolves when none is left. */
  stopAll(): Promise<void>;
  /** Programs running now. */
  running(): number;
}

/** What starts an option: "-" (POSIX, and most programs anywhere) and "/" (many Windows programs). */
const OPTION_START = /^[-/]+/;

/**
 * One argument template filled with a call's values, as one argument whatever the values hold.
 * The finished argument is judged, not where a placeholder sits: unless the administrator's own
 * text starts it with "-" or "/", it never does (with `{caller_name}{from}` and no name, the number
 * starts the argument; a caller ID of "-rf" must not become an option).
 */
export function fillArgument(template: string, values: CrmValues): string {
  const filled = fillPlaceholders(template, (name) =>
    (CALL_PLACEHOLDERS as readonly string[]).includes(name)
      ? displayText(values[name as keyof CrmValues] ?? '')
      : undefined,
  );
  return OPTION_START.test(template) ? filled : filled.replace(OPTION_START, '');
}

export interface RingActionsDeps {
  actions: readonly RingAction[];
  urlOpener: UrlOpener;
  runner: ProgramRunner;
  logger: Logger;
  /** The URL schemes links may use (the settings in force). */
  allowedSchemes: () => readonly string[];
}

export class RingActions {
  private readonly d: RingActionsDeps;
  private readonly logger: Logger;

  constructor(deps: RingActionsDeps) {
    this.d = deps;
    this.logger = deps.logger.child({ component: 'ring-actions' });
  }

  get count(): number {
    return this.d.actions.length;
  }

  /** Stops every program the actions started that still runs (the app or the runner stopping). */
  stop(): Promise<void> {
    return this.d.runner.stopAll();
  }

  /**
   * A new call rings for the user. `openLinks` false (Do Not Disturb: a link would take the
   * screen; the headless runner: no browser) skips links; programs run always (they log, look
   * up, integrate).
   */
  run(values: CrmValues, options: { openLinks: boolean }): void {
    this.d.actions.forEach((action, index) => {
      try {
        if (action.kind === 'openUrl') {
          if (!options.openLinks) return;
          const built = buildCrmUrl(action.url, values, this.d.allowedSchemes());
          if (!built.ok) {
            this.logger.warn('ring action: link not opened', {
              action: index,
              reason: built.message,
            });
            return;
          }
          void Promise.resolve(this.d.urlOpener.open(built.url)).catch((err: unknown) =>
            this.logger.warn('ring action: link could not be opened', {
              action: index,
              error: err,
            }),
          );
        } else {
          this.d.runner.run(
            action.program,
            action.args.map((a) => fillArgument(a, values)),
          );
          this.logger.info('ring action: program started', { action: index });
        }
      } catch (err) {
        this.logger.error('ring action failed', { action: index, error: err });
      }
    });
  }
}
