/**
 * The size each window opens at (outer size, frame included), kept apart from windows.ts so the
 * browser tests and the README screenshot script lay the pages out at the width a user first sees.
 * History is 800 wide: at 720 a row whose outcome reads "Answered by a colleague" pushed its
 * duration onto a second line and wrapped the called line's number (issue 21, README picture).
 */
export const WINDOW_SIZES = {
  settings: { width: 620, height: 760, title: 'Screenpop Settings' },
  history: { width: 800, height: 600, title: 'Screenpop History' },
  /** The dial box (tray menu): one field, Call, and a line for the answer. */
  dial: { width: 380, height: 260, title: 'Screenpop: Call a number' },
} as const;
