import type { DynamicModule, Type } from '@nestjs/common';

/** The feature modules of the CAS, one per folder. Append new ones (one line each). */
export const featureModules: Array<Type | DynamicModule> = [];
