import { measureGrowth, type GrowthMeasurement } from '@collect/testing';
import { parseManifest } from './manifest.js';

/**
 * The encrypted-submission manifest is a parser of user input like the others
 * (docs/security.md "Parsers of user input"): time(4n) / time(n) stays under 8. Its file name
 * ends in `parsers-complexity` so `pnpm test` runs it in the process of its own those rows need.
 */
const BOUND = 8;
const UNBOUNDED = { maxNodes: 10_000_000, maxDepth: 64 };

function manifest(n: number): string {
  const media = Array.from({ length: n }, (_, i) => `<media><file>photo_${String(i).padStart(7, '0')}.jpg.enc</file></media>`);
  return `<data xmlns="http://www.opendatakit.org/xforms/encrypted" id="f" encrypted="yes"><base64EncryptedKey>${'A'.repeat(344)}</base64EncryptedKey><orx:meta xmlns:orx="http://openrosa.org/xforms"><orx:instanceID>uuid:1</orx:instanceID></orx:meta>${media.join('')}<encryptedXmlFile>submission.xml.enc</encryptedXmlFile><base64EncryptedElementSignature>${'A'.repeat(344)}</base64EncryptedElementSignature></data>`;
}

describe('the encrypted-submission manifest parser is linear (time(4n)/time(n) < 8)', () => {
  it('manifest with many media files', async () => {
    let best: GrowthMeasurement | undefined;
    for (let attempt = 0; attempt < 3 && !(best && best.ratio < BOUND); attempt++) {
      const m = await measureGrowth(manifest, (x: unknown) => {
        const out = parseManifest(x as string, UNBOUNDED);
        if (!out.ok) throw new Error(out.failure.message);
      }, { n: 20_000 });
      if (!best || m.ratio < best.ratio) best = m;
    }
    process.stdout.write(`manifest parser growth (x4 input): n=${best!.n} ${best!.smallMs.toFixed(1)} ms -> ${best!.largeMs.toFixed(1)} ms, ratio ${best!.ratio.toFixed(2)}\n`);
    expect(best!.ratio).toBeLessThan(BOUND);
  }, 300_000);
});
