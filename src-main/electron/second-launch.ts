/**
 * Another launch of Screenpop while it runs (the single-instance lock sends it here as
 * 'second-instance'): the settings window comes up. The listener is on from the first line of
 * start-up, before any await: a launch while start-up still reads the policy, the settings or the
 * keychain is kept and answered once the windows exist, never lost.
 */
export interface SecondLaunchApp {
  on(event: 'second-instance', listener: () => void): unknown;
}

export interface SecondLaunches {
  /** From now on a launch calls `answer` (and one that came before is answered now). */
  answerWith(answer: () => void): void;
}

export function listenForSecondLaunches(app: SecondLaunchApp): SecondLaunches {
  let answer: (() => void) | null = null;
  let waiting = false;
  app.on('second-instance', () => {
    if (answer) answer();
    else waiting = true;
  });
  return {
    answerWith(next) {
      answer = next;
      if (waiting) {
        waiting = false;
        next();
      }
    },
  };
}
