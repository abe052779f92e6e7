import { BadRequestException, Inject, Injectable, Logger, NotFoundException, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { DeliveryRelay } from './delivery-relay.js';
import { PeriodicTask } from './periodic-task.js';
import type { ReplayBody, ReplayDto } from './replay.dto.js';
import { ReplaysRepository } from './replays.repository.js';
import type { ReplayEntity, ReplayFilters, RestServiceEntity } from './restservice.entities.js';

/** Outbox rows written per statement: one short transaction each. */
const BATCH = 1_000;

/**
 * Replay / back-fill (docs/restservices.md, "Replay"): existing submissions sent again to one
 * service, as `created` deliveries through the ordinary outbox, so each goes through the
 * destination limit, the retries and the delivery log like any other. The request counts and
 * records the replay; the delivery worker writes its outbox rows in batches past a cursor
 * (resumable after a restart) and the rows are paced at send time by the service's limit.
 */
@Injectable()
export class ReplayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ReplayService.name);
  private readonly filler: PeriodicTask<void>;

  constructor(
    private readonly repo: ReplaysRepository,
    private readonly relay: DeliveryRelay,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {
    this.filler = new PeriodicTask(() => this.fillPass(), config.FORWARD_RELAY_INTERVAL_MS);
  }

  async request(service: RestServiceEntity, body: ReplayDto, userId: number | null): Promise<{ count: number } | ReplayBody> {
    const filters: ReplayFilters = {};
    if (body.submitted_after !== undefined) filters.submitted_after = new Date(body.submitted_after).toISOString();
    if (body.submitted_before !== undefined) filters.submitted_before = new Date(body.submitted_before).toISOString();
    if (body.submission_ids !== undefined) filters.submission_ids = body.submission_ids;
    if (body.only_failed) filters.only_failed = true;
    if (filters.submitted_after && filters.submitted_before && filters.submitted_after >= filters.submitted_before) {
      throw new BadRequestException({ submitted_before: ['Must be later than submitted_after.'] });
    }
    const upto = await this.repo.newestSubmissionId(service.formId);
    const count = await this.repo.countMatching(service.formId, service.id, filters, upto);
    if (body.dry_run) return { count };
    if (!service.active) throw new BadRequestException({ detail: 'The service is inactive; PATCH it with "active": true first.' });
    const replay = await this.repo.create({ serviceId: service.id, filters, total: count, upto, createdBy: userId, written: count === 0, status: count === 0 ? 'done' : 'queued', finishedAt: count === 0 ? new Date() : null });
    this.kick();
    return present(replay);
  }

  async get(service: RestServiceEntity, id: string): Promise<ReplayBody> {
    const replay = await this.load(service, id);
    if (replay.status !== 'running' && replay.status !== 'queued') return present(replay);
    const p = await this.repo.progress(replay.id);
    if (replay.written && p.open === 0) {
      await this.repo.finish(replay.id, p.done, p.failed);
      return present((await this.repo.findById(replay.id))!);
    }
    return { ...present(replay), done: p.done, failed: p.failed };
  }

  async cancel(service: RestServiceEntity, id: string): Promise<void> {
    const replay = await this.load(service, id);
    if (await this.repo.cancel(replay.id)) this.logger.log({ event: 'restservice.replay_cancelled', replayId: replay.id, serviceId: service.id });
  }

  private async load(service: RestServiceEntity, id: string): Promise<ReplayEntity> {
    const replay = /^\d{1,10}$/.test(id) ? await this.repo.find(service.id, Number(id)) : null;
    if (!replay) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return replay;
  }

  /** The worker writes the outbox rows of unfinished replays, soon after a request and every relay interval. */
  onApplicationBootstrap(): void {
    if (this.config.FORWARD_DELIVER_IN_PROCESS) this.filler.start();
  }

  private kick(): void {
    if (this.config.FORWARD_DELIVER_IN_PROCESS) void this.filler.runOnce();
  }

  /** Writes every pending batch of every unfinished replay, then drops rows of cancelled ones put back meanwhile. */
  private async fillPass(): Promise<void> {
    try {
      for (const id of await this.repo.unwritten()) {
        if (this.filler.isStopped) return;
        await this.fill(id);
      }
      await this.repo.purgeCancelled();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'replay pass failed; will retry');
    }
  }

  private async fill(id: number): Promise<void> {
    for (;;) {
      const replay = await this.repo.findById(id);
      if (!replay || replay.written || (replay.status !== 'queued' && replay.status !== 'running')) return;
      const formId = await this.repo.formOfService(replay.serviceId);
      if (formId === null) return;
      const written = await this.repo.writeBatch(replay, formId, BATCH);
      if (written) this.relay.nudge();
      if (written < BATCH || this.filler.isStopped) {
        if (written < BATCH) await this.repo.markWritten(id);
        return;
      }
    }
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.filler.stop();
  }
}

function present(r: ReplayEntity): ReplayBody {
  return { id: r.id, status: r.status, total: r.total, done: r.done, failed: r.failed, created_at: r.createdAt.toISOString() };
}
