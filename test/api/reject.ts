import { expect } from 'vitest';
import { ServiceError } from '../../src-shared/api/service-errors.ts';

/** The ServiceError a promise rejects with; fails the test if it resolves or rejects with anything else. */
export async function rejection(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError);
    return err as ServiceError;
  }
  throw new Error('expected a rejection');
}
