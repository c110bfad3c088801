/** The relay's sampled log lines follow the shared rule: src-shared/process/log-sampler.ts. */
export { SampledLog } from '../src-shared/process/log-sampler.ts';
