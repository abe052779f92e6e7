import { collectGarbage } from './complexity.js';

/**
 * Whether the target of `ref` is gone after a few full collections: what a test of a leak asks
 * once it has dropped its own references. Each collection runs after the current job, because a
 * `deref()` (or the WeakRef's creation) keeps the target alive until the job ends.
 */
export async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    collectGarbage();
  }
  return ref.deref() === undefined;
}
