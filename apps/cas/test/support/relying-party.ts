import { DEV_SEED, startTestCasApp, type TestCasApp } from '../test-app.js';
import { CallbackServer } from './callback-server.js';
import { writeSeedFile } from './seed-file.js';

/**
 * The start of the browser-flow suites: a relying party's callback server, whose `/auth/callback`
 * is collect-web's redirect URI, and a CAS on the development seed plus the `clients` the suite
 * needs (made from the relying party's addresses) and any other settings in `env`.
 */
export async function startCasWithRelyingParty(
  clients: (rp: { base: string; redirectUri: string }) => Array<Record<string, unknown>>,
  env: Record<string, string> = {},
): Promise<{ sut: TestCasApp; rp: CallbackServer; redirectUri: string }> {
  const rp = await new CallbackServer().start();
  const redirectUri = `${rp.base}/auth/callback`;
  try {
    const seedFile = writeSeedFile({ clients: clients({ base: rp.base, redirectUri }) });
    const sut = await startTestCasApp({ CAS_DEV_SEED_FILE: DEV_SEED, CAS_DEV_COLLECT_WEB_REDIRECT_URI: redirectUri, CAS_SEED_FILE: seedFile, ...env });
    return { sut, rp, redirectUri };
  } catch (err) {
    await rp.close();
    throw err;
  }
}
