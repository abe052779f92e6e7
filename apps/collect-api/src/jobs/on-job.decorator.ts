import { SetMetadata } from '@nestjs/common';
import type { JobContext, JobData, JobName } from './job.types.js';

export const JOB_HANDLER = 'collect:job-handler';

/**
 * Marks a provider method as THE handler of one job kind. The method's parameter must be that
 * kind's payload (checked at compile time), and it may take the JobContext as second;
 * JobHandlerRegistry finds it at boot.
 */
export function OnJob<N extends JobName>(name: N) {
  return <F extends (data: JobData<N>, context: JobContext) => Promise<unknown>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<F>): void => {
    SetMetadata(JOB_HANDLER, name)(target, key, descriptor);
  };
}
