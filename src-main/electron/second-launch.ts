/**
 * Another launch of Screenpop while it runs (the single-instance lock sends it here as
 * 'second-instance', with that launch's command line), and on macOS a link the system hands the
 * running app ('open-url'): each comes to the one answer, with the arguments it carried (a
 * `tel:`/`callto:`/`sip:` link among them is dialled after confirmation; otherwise the settings
 * window comes up). The listeners are on from the first line of start-up, before any await: a
 * launch or link while start-up still reads the policy, the settings or the keychain is kept and
 * answered once the windows exist, never lost (at most a few are kept: a flood of links is not).
 */
export interface SecondLaunchApp {
  on(event: 'second-instance', listener: (event: unknown, argv: string[]) => void): unknown;
  on(
    event: 'open-url',
    listener: (event: { preventDefault(): void }, url: string) => void,
  ): unknown;
}

/** What a launch carried: its arguments (a link from macOS' open-url comes as the one argument). */
export type LaunchAnswer = (argv: readonly string[]) => void;

export interface SecondLaunches {
  /** From now on a launch calls `answer` (and those that came before are answered now). */
  answerWith(answer: LaunchAnswer): void;
}

/** Launches kept while start-up runs; more are dropped (the first ones are answered). */
const MAX_WAITING = 4;

export function listenForSecondLaunches(app: SecondLaunchApp): SecondLaunches {
  let answer: LaunchAnswer | null = null;
  const waiting: (readonly string[])[] = [];
  const arrive = (argv: readonly string[]): void => {
    if (answer) answer(argv);
    else if (waiting.length < MAX_WAITING) waiting.push(argv);
  };
  app.on('second-instance', (_event, argv) => {
    // Windows and Linux: the link is on the second launch's command line.
    arrive(Array.isArray(argv) ? argv.filter((a) => typeof a === 'string') : []);
  });
  app.on('open-url', (event, url) => {
    // macOS: the system hands the running app the link (a first launch by a link too).
    event.preventDefault();
    arrive(typeof url === 'string' ? [url] : []);
  });
  return {
    answerWith(next) {
      answer = next;
      for (const argv of waiting.splice(0)) next(argv);
    },
  };
}
