import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { ProfilesController } from './profiles.controller.js';
import { UserController } from './user.controller.js';

/** `/api/v1/profiles` (registration, public profiles) and `/api/v1/user` (the caller's own profile and tokens). */
@Module({ imports: [UsersModule], controllers: [ProfilesController, UserController] })
export class ProfilesModule {}
