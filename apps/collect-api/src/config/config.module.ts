import { Global, Module, type DynamicModule } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from './collect-config.js';

/** The parsed configuration, provided once for the whole app. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: CollectConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: COLLECT_CONFIG, useValue: config }], exports: [COLLECT_CONFIG] };
  }
}
