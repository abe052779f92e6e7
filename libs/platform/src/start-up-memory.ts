/** `gc` as `--expose-gc` provides it (V8's gc extension and its options). */
type ExposedGc = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async'; flavor?: 'regular' | 'last-resort' }) => void;

/**
 * Gives back the memory start-up took and no longer uses: one full collection in V8's
 * memory-reducing mode (the `last-resort` flavour of `gc()`, as under memory pressure), which
 * shrinks the young generation to its initial size and releases the heap's free pages. V8
 * grows the young generation while start-up allocates (module graph, metadata) and keeps it
 * while idle; after this it grows again only under load, up to `--max-semi-space-size`
 * (docs/operations.md, "Memory"). Runs where `--expose-gc` is set (the images' NODE_OPTIONS),
 * else does nothing (tests, `pnpm start`); answers whether it ran. Call it once, when the
 * service is built and before it takes traffic: the collection takes some tens of ms.
 */
export function releaseStartUpMemory(): boolean {
  const gc = (globalThis as { gc?: ExposedGc }).gc;
  if (typeof gc !== 'function') return false;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return true;
}
