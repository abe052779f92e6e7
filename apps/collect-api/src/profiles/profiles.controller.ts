import { Body, Controller, Get, HttpCode, Inject, NotFoundException, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HttpErrorWithHeaders, NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { presentProfile, type ProfileBody } from '../users/profile.presenter.js';
import { UsersService } from '../users/users.service.js';
import { parseRegistration } from './profile-input.js';

/** Registration (`POST /api/v1/profiles`) and public profiles. */
@ApiTags('profiles')
@Controller('api/v1/profiles')
export class ProfilesController {
  constructor(
    private readonly users: UsersService,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Creates a user (open registration unless PROFILES_REGISTRATION_ENABLED=false; admins always).' })
  async register(@CurrentUser() caller: AuthenticatedUser | undefined, @Body() body: unknown): Promise<ProfileBody> {
    if (!this.config.PROFILES_REGISTRATION_ENABLED && !caller?.isSuperuser) {
      if (!caller) throw new HttpErrorWithHeaders(403, 'Registration is disabled.', {});
      throw new HttpErrorWithHeaders(403, 'Registration is disabled; only platform admins create users.', {});
    }
    const input = parseRegistration(body);
    const user = await this.users.create(input);
    return presentProfile(user, this.config.PUBLIC_BASE_URL, true);
  }

  @Get(':username')
  @ApiOperation({ summary: 'A profile; email and is_superuser are shown to its owner and platform admins only.' })
  async get(@CurrentUser() caller: AuthenticatedUser | undefined, @Param('username') username: string): Promise<ProfileBody> {
    const user = await this.users.findByUsername(username);
    if (!user || !user.isActive) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const showPrivate = !!caller && (caller.id === user.id || caller.isSuperuser);
    return presentProfile(user, this.config.PUBLIC_BASE_URL, showPrivate);
  }
}
