// The worker side of rsa-threads.ts: RSA-OAEP unwrappings with Collect's reading (SHA-256,
// MGF1-SHA-256), one message at a time. The key comes with each message and is not kept.
import { constants, privateDecrypt, type KeyObject } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

// A reading that does not open the value throws, which is expected: no stack trace for it.
Error.stackTraceLimit = 0;

parentPort!.on('message', ({ id, key, wrapped }: { id: number; key: KeyObject; wrapped: Uint8Array }) => {
  let plaintext: Buffer | null = null;
  try {
    // OpenSSL's MGF1 digest defaults to the OAEP digest.
    plaintext = privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, wrapped);
  } catch {
    // Not this reading, or not this key: the caller decides (rsa-oaep.ts, unwrapOaep).
  }
  parentPort!.postMessage({ id, plaintext });
});
