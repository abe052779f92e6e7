import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Queue } from 'bull';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { SubmissionEvents } from '../submissions/submission-events.js';
import { MediaRepository } from './media.repository.js';
import { hasVariants, MediaVariantsService } from './media-variants.service.js';
import { VARIANT_SIZES, type VariantName } from '../wire-formats/media-urls.js';

export const MEDIA_VARIANTS_QUEUE = 'media-variants';

export interface MediaVariantsJob {
  submissionId: number;
}

/**
 * MEDIA_VARIANTS_AT_SUBMISSION: every API process queues one job per stored submission after
 * commit; the delivery worker makes the variants of its images. A lost job costs nothing but
 * speed (the variant is made on its first request), so this needs no outbox.
 */
@Injectable()
export class MediaVariantsQueue implements OnApplicationBootstrap {
  private readonly logger = new Logger(MediaVariantsQueue.name);
  /** Variants made by jobs of this process (observability and tests). */
  made = 0;

  constructor(
    events: SubmissionEvents,
    @InjectQueue(MEDIA_VARIANTS_QUEUE) private readonly queue: Queue<MediaVariantsJob>,
    private readonly repo: MediaRepository,
    private readonly variants: MediaVariantsService,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {
    if (!config.MEDIA_VARIANTS_AT_SUBMISSION) return;
    events.onCommitted(async (event) => {
      if (event.type === 'submission.deleted') return;
      await this.queue.add({ submissionId: event.submissionId }, { removeOnComplete: true, removeOnFail: true, attempts: 1 });
    });
  }

  onApplicationBootstrap(): void {
    if (!this.config.MEDIA_VARIANTS_AT_SUBMISSION || !this.config.FORWARD_DELIVER_IN_PROCESS) return;
    void this.queue.process(2, (job) => this.makeVariants(job.data.submissionId));
  }

  /** Every variant of every image of the submission; an unreadable image is logged and skipped. */
  async makeVariants(submissionId: number): Promise<number> {
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
