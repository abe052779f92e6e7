import { SetMetadata } from '@nestjs/common';
import type { JobData, JobName } from './job.types.js';

export const JOB_HANDLER = 'collect:job-handler';

/**
 * Marks a provider method as THE handler of one job kind. The method's parameter must be that
 * kind's payload (checked at compile time); JobHandlerRegistry finds it at boot.
 */
export function OnJob<N extends JobName>(name: N) {
  return <R>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<(data: JobData<N>) => Promise<R>>): void => {
    SetMetadata(JOB_HANDLER, name)(target, key, descriptor);
  };
}
