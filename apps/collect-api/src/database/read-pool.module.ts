import { Global, Module } from '@nestjs/common';
import { ReadPool } from './read-pool.js';
import { ReadSlots } from './read-slots.js';

/** The pool and slots of streamed and heavy reads (global: one per process). */
@Global()
@Module({ providers: [ReadPool, ReadSlots], exports: [ReadPool, ReadSlots] })
export class ReadPoolModule {}
