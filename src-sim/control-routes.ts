import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Simulator } from './types.ts';
import { sendError } from './errors.ts';

export const CONTROL_PREFIX = '/_sim/';

export async function handleControl(req: IncomingMessage, res: ServerResponse, _sim: Simulator): Promise<void> {
  req.resume();
  sendError(res, 50000, 'not yet');
}
