import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { CollectConfig } from '../config/collect-config.js';
import { JobQueue } from '../jobs/job-queue.js';
import type { JobData } from '../jobs/job.types.js';
import { OnJob } from '../jobs/on-job.decorator.js';
import { SubmissionEvents } from '../submissions/submission-events.js';
import { MediaRepository } from './media.repository.js';
import { hasVariants, MediaVariantsService } from './media-variants.service.js';
import { VARIANT_SIZES, type VariantName } from '../wire-formats/media-urls.js';

/**
 * MEDIA_VARIANTS_AT_SUBMISSION: every API process queues one job per stored submission after
 * commit; the delivery worker makes the variants of its images. A lost job costs nothing but
 * speed (the variant is made on its first request), so this needs no outbox.
 */
@Injectable()
export class MediaVariantsQueue implements OnModuleInit {
  private readonly logger = new Logger(MediaVariantsQueue.name);
  /** Variants made by jobs of this process (observability and tests). */
  made = 0;

  constructor(
    private readonly events: SubmissionEvents,
    private readonly jobs: JobQueue,
    private readonly repo: MediaRepository,
    private readonly variants: MediaVariantsService,
    private readonly config: CollectConfig,
  ) {}

  onModuleInit(): void {
    if (!this.config.MEDIA_VARIANTS_AT_SUBMISSION) return;
    this.events.onCommitted(async (event) => {
      if (event.type === 'submission.deleted') return;
      await this.jobs.add({ name: 'make-variants', data: { submissionId: event.submissionId } });
    });
  }

  /** Every variant of every image of the submission; an unreadable image is logged and skipped. */
  @OnJob('make-variants')
  async makeVariants({ submissionId }: JobData<'make-variants'>): Promise<number> {
    let made = 0;
    for (const attachment of await this.repo.liveOfSubmission(submissionId)) {
      if (!hasVariants(attachment.mimetype)) continue;
      for (const name of Object.keys(VARIANT_SIZES) as VariantName[]) {
        try {
          await this.variants.variant(attachment, name);
          made++;
        } catch (err) {
          // The request path answers 422 for it later; the original stays downloadable.
          this.logger.warn({ attachment: attachment.id, variant: name, err: (err as Error).message }, 'variant not made at submission');
          break;
        }
      }
    }
    this.made += made;
    return made;
  }
}
