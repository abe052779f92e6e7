import { Body, Controller, Get, HttpCode, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import { presentProfile, ProfileBody } from '../users/profile.presenter.js';
import { UsersService } from '../users/users.service.js';
import { RegisterProfileDto, registrationInput } from './profile.dto.js';
import { RegistrationOpenGuard } from './registration-open.guard.js';

/** Registration (`POST /api/v1/profiles`) and public profiles. */
@ApiTags('profiles')
@Controller('api/v1/profiles')
export class ProfilesController {
  constructor(
    private readonly users: UsersService,
    private readonly config: CollectConfig,
  ) {}

  @Post()
  @HttpCode(201)
  @UseGuards(RegistrationOpenGuard)
  @ApiOperation({ summary: 'Creates a user (open registration unless PROFILES_REGISTRATION_ENABLED=false; admins always).' })
  @ApiCreatedResponse({ type: ProfileBody })
  async register(@Body() body: RegisterProfileDto): Promise<ProfileBody> {
    const user = await this.users.create(registrationInput(body));
    return presentProfile(user, this.config.PUBLIC_BASE_URL, true);
  }

  @Get(':username')
  @ApiOperation({ summary: 'A profile; email and is_superuser are shown to its owner and platform admins only.' })
  @ApiOkResponse({ type: ProfileBody })
  async get(@CurrentUser() caller: AuthenticatedUser | undefined, @Param('username') username: string): Promise<ProfileBody> {
    const user = await this.users.findByUsername(username);
    if (!user || !user.isActive) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const showPrivate = !!caller && (caller.id === user.id || caller.isSuperuser);
    return presentProfile(user, this.config.PUBLIC_BASE_URL, showPrivate);
  }
}
