/**
 * One clock for the benchmark's processes: the system's monotonic clock (CLOCK_MONOTONIC, what
 * process.hrtime reads), in ms. The poster stamps due times in one process and the load workers
 * stamp arrivals in others. `performance.timeOrigin + performance.now()` is anchored once per
 * process, at its start, by reading the wall clock and the monotonic clock one after the other; on
 * this busy VM processes disagreed by milliseconds that way (medians below zero in the floor runs
 * of 21:03-21:06), while the monotonic clock is one for all processes.
 */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;
