import { BadRequestException, ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL, TooManyRequestsError } from '@collect/contracts';
import { CollectConfig } from '../../config/collect-config.js';
import { JobQueue } from '../../jobs/job-queue.js';
import type { JobData } from '../../jobs/job.types.js';
import { OnJob } from '../../jobs/on-job.decorator.js';
import type { ReplayBody, ReplayDto } from './replay.dto.js';
import { ReplaysRepository } from './replays.repository.js';
import type { ReplayEntity, ReplayFilters, RestServiceEntity } from '../restservice.entities.js';

/** Outbox rows written per statement: one short transaction each. */
const BATCH = 1_000;

/**
 * Replay / back-fill (docs/restservices.md, "Replay"): existing submissions sent again to one
 * service, as `created` deliveries through the ordinary outbox, and the live entities of the
 * lists its form uses as `entity_created`, so each goes through the
 * destination limit, the retries and the delivery log like any other. The request counts and
 * records the replay and queues a `replay` job; the worker's handler writes the outbox rows in
 * batches past a cursor (resumable: ReplayResumer re-queues an unfinished one) and the rows
 * are paced at send time by the service's limit.
 */
@Injectable()
export class ReplayService {
  private readonly logger = new Logger(ReplayService.name);
  private stopped = false;

  constructor(
    private readonly repo: ReplaysRepository,
    private readonly jobs: JobQueue,
    private readonly config: CollectConfig,
  ) {}

  async request(service: RestServiceEntity, body: ReplayDto, userId: number | null): Promise<{ count: number } | ReplayBody> {
    const filters: ReplayFilters = {};
    if (body.submitted_after !== undefined) filters.submitted_after = new Date(body.submitted_after).toISOString();
    if (body.submitted_before !== undefined) filters.submitted_before = new Date(body.submitted_before).toISOString();
    if (body.submission_ids !== undefined) filters.submission_ids = body.submission_ids;
    if (body.only_failed) filters.only_failed = true;
    if (filters.submitted_after && filters.submitted_before && filters.submitted_after >= filters.submitted_before) {
      throw new BadRequestException({ submitted_before: ['Must be later than submitted_after.'] });
    }
    // A replay sends `created` events (submissions) and `entity_created` events (entities): a
    // service that takes neither has nothing to replay.
    if (!service.events.includes('created') && !service.events.includes('entity_created')) {
      throw new BadRequestException({ detail: 'This service takes neither "created" nor "entity_created" events, which a replay sends; add one of them to its events first.' });
    }
    if (body.dry_run) return { count: (await this.extent(service, filters)).count };
    if (!service.active) throw new BadRequestException({ detail: 'The service is inactive; PATCH it with "active": true first.' });
    return present(await this.start(service, filters, userId));
  }

  /**
   * The spreadsheet back-fill (linking a sheet, or PATCH `send_existing_data: true`): a replay of
   * every live submission the sheet has no row for yet; its id is kept in the service's options
   * (`backfill_replay`) so its progress reads at GET .../replays/{id}. The delivery handler sends
   * a spreadsheet replay's rows 100 to an append (docs/restservices.md, "Spreadsheet back-fill").
   */
  async backfillSheet(service: RestServiceEntity, userId: number | null): Promise<ReplayEntity> {
    return this.start(service, { missing_in_sheet: true }, userId);
  }

  /**
   * What a replay of `service` sends now: the newest submission and entity it may send, and how
   * many match. Submissions only when the service takes `created`; entities only when it takes
   * `entity_created`, and never for the spreadsheet back-fill (rows of submissions).
   */
  private async extent(service: RestServiceEntity, filters: ReplayFilters): Promise<{ upto: number; entityUpto: number; count: number }> {
    const upto = service.events.includes('created') ? await this.repo.newestSubmissionId(service.formId) : 0;
    const entityUpto = service.events.includes('entity_created') && !filters.missing_in_sheet ? await this.repo.newestEntityId(service.formId) : 0;
    const submissions = upto > 0 ? await this.repo.countMatching(service.formId, service.id, filters, upto) : 0;
    return { upto, entityUpto, count: submissions + (await this.repo.countEntitiesMatching(service.formId, service.id, filters, entityUpto)) };
  }

  /** Records a replay of the submissions and entities that exist now and queues the writing of its rows. */
  private async start(service: RestServiceEntity, filters: ReplayFilters, userId: number | null): Promise<ReplayEntity> {
    const { upto, entityUpto, count } = await this.extent(service, filters);
    const row = { serviceId: service.id, filters, total: count, upto, entityUpto, createdBy: userId, written: count === 0, status: count === 0 ? 'done' : 'queued', finishedAt: count === 0 ? new Date() : null } as const;
    if (count === 0) return this.repo.create(row);
    // One open replay per service and a few per user (docs/security.md, "Rate limits, quotas and forwarding input").
    const replay = await this.repo.createExclusive(row, this.config.REPLAY_MAX_OPEN_PER_USER);
    if ('refused' in replay) {
      if (replay.refused === 'service') throw new ConflictException({ detail: 'A replay of this service is still open; wait for it to finish or cancel it (DELETE .../replays/{id}).' });
      throw new TooManyRequestsError(`You have ${this.config.REPLAY_MAX_OPEN_PER_USER} replays open, the most allowed; wait for one to finish or cancel one.`, 60);
    }
    await this.queue(replay.id);
    return replay;
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

  /** Queues the writing of a replay's rows; a Redis outage leaves it to ReplayResumer. */
  async queue(replayId: number): Promise<void> {
    await this.jobs.add({ name: 'replay', data: { replayId } }).catch((err: Error) => this.logger.warn({ err: err.message, replayId }, 'could not queue the replay; the worker resumes it'));
  }

  @OnJob('replay')
  async fill({ replayId }: JobData<'replay'>): Promise<void> {
    await this.write(replayId);
  }

  private async write(id: number): Promise<void> {
    for (;;) {
      const replay = await this.repo.findById(id);
      if (!replay || replay.written || (replay.status !== 'queued' && replay.status !== 'running')) return;
      const formId = await this.repo.formOfService(replay.serviceId);
      if (formId === null) return;
      // Each batch NOTIFYs the relay at commit (replays.repository.ts). The submissions first,
      // then the entities; a resumed replay finds its submissions written (past the cursor).
      let written = await this.repo.writeBatch(replay, formId, BATCH);
      if (written < BATCH) written = await this.repo.writeEntityBatch(replay, formId, BATCH);
      if (written < BATCH || this.stopped) {
        if (written < BATCH) await this.repo.markWritten(id);
        return;
      }
    }
  }

  /** SIGTERM: the batch being written commits, the next one is the resumed job's. */
  beforeApplicationShutdown(): void {
    this.stopped = true;
  }
}

function present(r: ReplayEntity): ReplayBody {
  return { id: r.id, status: r.status, total: r.total, done: r.done, failed: r.failed, created_at: r.createdAt.toISOString() };
}
