/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same keys,
 * extension names and traffic, run after run. Not for anything secret.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** `n` lower-case hex characters. */
  hex(n: number): string {
    let out = '';
    while (out.length < n)
      out += Math.floor(this.next() * 0x10000)
        .toString(16)
        .padStart(4, '0');
    return out.slice(0, n);
  }

  /** An independent generator derived from this one (so one stream's use does not shift another's). */
  fork(label: number): Rng {
    return new Rng(Math.floor(this.next() * 4294967296) ^ Math.imul(label, 0x85ebca6b));
  }
}
