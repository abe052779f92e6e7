import { Global, Module, type DynamicModule } from '@nestjs/common';
import { CAS_CONFIG, type CasConfig } from './cas-config.js';

/** The parsed configuration, provided once for the whole app. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: CasConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: CAS_CONFIG, useValue: config }], exports: [CAS_CONFIG] };
  }
}
