/** The relay's sampled log lines follow the shared rule: src-shared/log-sampler.ts. */
export { SampledLog } from '../src-shared/log-sampler.ts';
