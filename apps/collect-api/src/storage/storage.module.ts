import { Global, Module } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { FILE_STORAGE, type FileStorage } from './file-storage.js';
import { LocalFileStorage } from './local-file-storage.js';

/** The S3 client (the AWS SDK) loads only with STORAGE_BACKEND=s3: idle memory (docs/benchmarks.md). */
export async function createFileStorage(config: CollectConfig): Promise<FileStorage> {
  if (config.STORAGE_BACKEND === 's3') {
    const { S3FileStorage } = await import('./s3-file-storage.js');
    return new S3FileStorage({
      endpoint: config.S3_ENDPOINT,
      region: config.S3_REGION,
      bucket: config.S3_BUCKET!,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
      forcePathStyle: config.S3_FORCE_PATH_STYLE,
      prefix: config.S3_PREFIX || undefined,
    });
  }
  return new LocalFileStorage(config.MEDIA_ROOT);
}

/** Provides FILE_STORAGE (inject with `@Inject(FILE_STORAGE) storage: FileStorage`). Global: media and rest services read files too. */
@Global()
@Module({
  providers: [{ provide: FILE_STORAGE, inject: [COLLECT_CONFIG], useFactory: createFileStorage }],
  exports: [FILE_STORAGE],
})
export class StorageModule {}
