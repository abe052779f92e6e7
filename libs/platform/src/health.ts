import { Controller, Get, HttpCode, Inject, Module, type DynamicModule, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';

/** One dependency the service needs to serve traffic (database, Redis, ...). */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

export class HealthBody {
  @ApiProperty({ type: 'string', enum: ['ok', 'unavailable'] })
  status: 'ok' | 'unavailable';

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string', enum: ['up', 'down'] }, description: 'Each dependency (database, Redis, ...).' })
  checks?: Record<string, 'up' | 'down'>;
}

/** 503 of `/health/ready`: which dependency is down. */
export class HealthUnavailableBody extends HealthBody {
  @ApiProperty({ type: 'string' })
  detail: string;
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

  @Get('live')
  @HttpCode(200)
  @ApiOperation({ summary: 'The process is alive (no dependency is checked).' })
  @ApiOkResponse({ type: HealthBody })
  live(): HealthBody {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Every dependency answers; 503 otherwise.' })
  @ApiOkResponse({ type: HealthBody })
  @ApiServiceUnavailableResponse({ type: HealthUnavailableBody })
  async ready(): Promise<HealthBody> {
    const report = await readiness(this.checks);
    if (report.status !== 'ok') throw new ServiceUnavailableException({ detail: 'Service unavailable.', ...report });
    return report;
  }
}

/** Runs every check (2 s each); `unavailable` when one fails. Also served by processes without Nest HTTP (the worker). */
export async function readiness(checks: ReadinessCheck[]): Promise<Required<HealthBody>> {
  const results = await Promise.all(
    checks.map(async (c) => {
      try {
        await withTimeout(c.check(), 2000);
        return [c.name, 'up'] as const;
      } catch {
        return [c.name, 'down'] as const;
      }
    }),
  );
  return { status: results.some(([, state]) => state === 'down') ? 'unavailable' : 'ok', checks: Object.fromEntries(results) };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout')), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}

/** `HealthModule.register(factory, inject)`: the app says which checks make it ready. */
@Module({})
export class HealthModule {
  static register(options: { useFactory: (...deps: never[]) => ReadinessCheck[]; inject: unknown[]; imports?: DynamicModule['imports'] }): DynamicModule {
    return {
      module: HealthModule,
      imports: options.imports ?? [],
      controllers: [HealthController],
      providers: [{ provide: READINESS_CHECKS, useFactory: options.useFactory as (...a: unknown[]) => ReadinessCheck[], inject: options.inject as never[] }],
    };
  }
}
