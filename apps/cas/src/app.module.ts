import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { structuredLoggerModule } from '@collect/platform';
import { ConfigModule } from './config/config.module.js';
import type { CasConfig } from './config/cas-config.js';
import { dataSourceOptions } from './database/data-source.js';
import { CasHealthModule } from './health/cas-health.module.js';
import { featureModules } from './feature-modules.js';

@Module({})
export class AppModule {
  static forRoot(config: CasConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        structuredLoggerModule('cas', config.LOG_LEVEL),
        TypeOrmModule.forRoot({ ...dataSourceOptions(config), migrationsRun: false }),
        CasHealthModule,
        ...featureModules,
      ],
    };
  }
}
