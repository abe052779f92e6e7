import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { ProfilesController } from './profiles.controller.js';

/** `/api/v1/profiles`: registration and public profiles. */
@Module({ imports: [UsersModule], controllers: [ProfilesController] })
export class ProfilesModule {}
