import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { JOB_NAMES, type JobContext, type JobItem, type JobName } from './job.types.js';
import { JOB_HANDLER } from './on-job.decorator.js';

type Handler = (data: unknown, context: JobContext) => Promise<unknown>;

/**
 * The handlers of every job kind, found among the providers by their `@OnJob(name)` mark. Boot
 * fails (an error naming the kind) when a kind has no handler or more than one, so a job can
 * never wait in Redis for a consumer that does not exist.
 */
@Injectable()
export class JobHandlerRegistry implements OnModuleInit {
  private readonly handlers = new Map<JobName, Handler>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const found = new Map<JobName, string[]>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const name = this.reflector.get<JobName | undefined>(JOB_HANDLER, instance[method] as Handler);
        if (!name) continue;
        found.set(name, [...(found.get(name) ?? []), `${wrapper.name as string}.${method}`]);
        this.handlers.set(name, (instance[method] as Handler).bind(instance));
      }
    }
    const problems: string[] = [];
    for (const name of JOB_NAMES) {
      const where = found.get(name) ?? [];
      if (where.length === 0) problems.push(`job "${name}" has no @OnJob handler`);
      if (where.length > 1) problems.push(`job "${name}" has ${where.length} handlers (${where.join(', ')})`);
    }
    for (const name of found.keys()) if (!JOB_NAMES.includes(name)) problems.push(`@OnJob("${name}") names no job kind of job.types.ts`);
    if (problems.length) throw new Error(`job handlers: ${problems.join('; ')}`);
  }

  run(item: JobItem, context: JobContext = { stopping: new AbortController().signal }): Promise<unknown> {
    const handler = this.handlers.get(item.name);
    if (!handler) throw new Error(`no handler for job "${item.name}"`);
    return handler(item.data, context);
  }
}
