import { Injectable, type Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { JobHandlerRegistry } from './job-handler.registry.js';
import type { JobData } from './job.types.js';
import { OnJob } from './on-job.decorator.js';

const ran: string[] = [];

@Injectable()
class Deliveries {
  @OnJob('replay')
  async replay({ replayId }: JobData<'replay'>): Promise<void> {
    ran.push(`replay ${replayId}`);
  }
}

@Injectable()
class Variants {
  @OnJob('make-variants')
  async make({ submissionId }: JobData<'make-variants'>): Promise<number> {
    ran.push(`variants ${submissionId}`);
    return 0;
  }
}

@Injectable()
class Exports {
  @OnJob('export')
  async write({ exportId }: JobData<'export'>): Promise<void> {
    ran.push(`export ${exportId}`);
  }
}

@Injectable()
class SecondDeliverer {
  @OnJob('replay')
  async replayToo(): Promise<void> {}
}

async function boot(...providers: Type[]): Promise<JobHandlerRegistry> {
  const moduleRef = await Test.createTestingModule({ imports: [DiscoveryModule], providers: [JobHandlerRegistry, ...providers] }).compile();
  await moduleRef.init();
  return moduleRef.get(JobHandlerRegistry);
}

describe('JobHandlerRegistry', () => {
  it('finds one handler per job kind and runs each with its payload', async () => {
    const sut = await boot(Deliveries, Variants, Exports);
    await sut.run({ name: 'make-variants', data: { submissionId: 9 } });
    await sut.run({ name: 'replay', data: { replayId: 4 } });
    await sut.run({ name: 'export', data: { exportId: 'e1' } });
    expect(ran).toEqual(['variants 9', 'replay 4', 'export e1']);
  });

  it('refuses to boot when a job kind has no handler', async () => {
    await expect(boot(Deliveries)).rejects.toThrow('job "make-variants" has no @OnJob handler');
    await expect(boot(Deliveries, Variants)).rejects.toThrow('job "export" has no @OnJob handler');
  });

  it('refuses to boot when a job kind has two handlers, naming both', async () => {
    await expect(boot(Deliveries, Variants, Exports, SecondDeliverer)).rejects.toThrow('job "replay" has 2 handlers (Deliveries.replay, SecondDeliverer.replayToo)');
  });
});
