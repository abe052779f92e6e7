import { Module } from '@nestjs/common';
import { EncryptedSubmissionsModule } from '../encrypted-submissions/encrypted-submissions.module.js';
import { FormsModule } from '../forms/forms.module.js';
import { BriefcaseController } from './briefcase.controller.js';
import { BriefcaseRepository } from './briefcase.repository.js';
import { BriefcaseService } from './briefcase.service.js';

/** ODK Briefcase's pull API: `/view/submissionList`, `/view/downloadSubmission` (docs/encryption.md "Briefcase pull"). */
@Module({
  imports: [FormsModule, EncryptedSubmissionsModule],
  controllers: [BriefcaseController],
  providers: [BriefcaseService, BriefcaseRepository],
})
export class BriefcaseModule {}
