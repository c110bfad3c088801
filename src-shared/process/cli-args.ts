/**
 * What node:util parseArgs gets wrong for people: `--stale-ring-sec -5` is refused as "argument is
 * ambiguous" (a value that starts with '-' looks like a flag to it), so the program never gets to
 * say that the number must be positive. A negative number given as a flag's value is joined to it
 * (`--stale-ring-sec=-5`), and the program's own check says what is wrong with it. Used by the
 * headless runner and the simulator.
 */
export function joinNegativeNumbers(
  argv: readonly string[],
  valueOptions: readonly string[],
): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (
      next !== undefined &&
      /^-\d/.test(next) &&
      arg.startsWith('--') &&
      valueOptions.includes(arg.slice(2))
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** The options of a parseArgs config that take a value. */
export function valueOptionsOf(options: Record<string, { type: 'string' | 'boolean' }>): string[] {
  return Object.entries(options)
    .filter(([, o]) => o.type === 'string')
    .map(([name]) => name);
}
