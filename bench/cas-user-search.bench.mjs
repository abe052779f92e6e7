// Time of a cas-api user search at 100k users ÷ at 1k users (goal <= 2): the trigram
// indexes of migration UserSearchIndexes1764000000000 must keep search time flat as users grow.
// Real parts: embedded PostgreSQL, the built CAS (apps/cas/dist/main.js) as a child process, a
// client-credentials token of demo-onboarding from that CAS, and GET /api/users over HTTP.
// The selective search (10 matches at both sizes) gives the ratio; a broad search, whose
// matches grow with the table, is printed for reference.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort, startPostgres, startServiceProcess } from '../libs/testing/dist/index.js';
import { runMigrations } from '../apps/cas/dist/database/data-source.js';
import { logLevelEnv, SERVICE_OUTPUT_KEPT } from './bench-helpers.mjs';

const casRequire = createRequire(new URL('../apps/cas/package.json', import.meta.url));
const pg = (await import(pathToFileURL(casRequire.resolve('pg')).href)).default;
const CAS_MAIN = fileURLToPath(new URL('../apps/cas/dist/main.js', import.meta.url));
const DEV_SEED = fileURLToPath(new URL('../apps/cas/seed/dev-seed.json', import.meta.url));

const SIZES = (process.env.BENCH_SIZES ?? '1000,100000').split(',').map(Number);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 200);
const GIVEN = ['Alice', 'Bruno', 'Chen', 'Dara', 'Emeka', 'Fatima', 'Goran', 'Hana', 'Ivan', 'Jun', 'Kofi', 'Lena', 'Mateo', 'Nia', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sami', 'Tara'];

async function fillUsers(url, size) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO cas_accounts (username, email, given_name, family_name)
       SELECT 'user' || lpad(i::text, 6, '0'), 'user' || i || '@' || (ARRAY['example.org','mail.test','corp.example'])[1 + i % 3],
              ($1::text[])[1 + i % 20], 'Family' || (i % 5000)
       FROM generate_series(1, $2::int - 10) AS i`,
      [GIVEN, size],
    );
    await client.query(`INSERT INTO cas_accounts (username, email, given_name, family_name)
                        SELECT 'rare' || i, 'rare' || i || '@zyx.example', 'Rare', 'Zyxwell' FROM generate_series(1, 10) AS i`);
    await client.query('VACUUM ANALYZE cas_accounts'); // steady state, as autovacuum leaves it
  } finally {
    await client.end();
  }
}

const pgServer = await startPostgres({ fast: true });
const results = {};
try {
  for (const size of SIZES) {
    const dbUrl = await pgServer.createDatabase(`bench_users_${size}`);
    await runMigrations({ CAS_DATABASE_URL: dbUrl, CAS_DATABASE_POOL_SIZE: 2 });
    await fillUsers(dbUrl, size);
    const port = await freePort();
    const cas = await startServiceProcess(CAS_MAIN, {
      NODE_ENV: 'test', ...logLevelEnv(), CAS_PORT: String(port), CAS_HOST: '127.0.0.1', CAS_ISSUER: `http://127.0.0.1:${port}`,
      CAS_DATABASE_URL: dbUrl, CAS_DEV_SEED_FILE: DEV_SEED,
    }, port, 30_000, [], SERVICE_OUTPUT_KEPT);
    try {
      const tokenRes = await fetch(`${cas.url}/connect/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from('demo-onboarding:demo-onboarding-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&scope=adminui-api-wrapper%20adminui-api-wrapper.users.search',
      });
      if (tokenRes.status !== 200) throw new Error(`token: ${tokenRes.status} ${await tokenRes.text()}`);
      const { access_token } = await tokenRes.json();
      const search = async (text) => {
        const res = await fetch(`${cas.url}/api/users?search=${text}`, { headers: { authorization: `Bearer ${access_token}` } });
        if (res.status !== 200) throw new Error(`search: ${res.status} ${await res.text()}`);
        return (await res.json()).count;
      };
      const time = async (text) => {
        for (let i = 0; i < 100; i++) await search(text); // warm JIT, plans, JWKS cache
        const start = process.hrtime.bigint();
        let count = 0;
        for (let i = 0; i < SEARCHES; i++) count = await search(text);
        return { ms: Number(process.hrtime.bigint() - start) / 1e6 / SEARCHES, count };
      };
      results[size] = { selective: await time('zyxwell'), broad: await time('fatima') };
      console.log(`${size} users: GET /api/users?search=zyxwell ${results[size].selective.ms.toFixed(2)} ms (${results[size].selective.count} matches), ?search=fatima ${results[size].broad.ms.toFixed(2)} ms (${results[size].broad.count} matches)`);
    } finally {
      await cas.stop();
    }
  }
  const small = Math.min(...SIZES);
  const large = Math.max(...SIZES);
  console.log(`ratio search time ${large / 1000}k/${small / 1000}k users: ${(results[large].selective.ms / results[small].selective.ms).toFixed(2)} (goal <= 2)`);
  console.log(`broad search (matches grow with users) ${large / 1000}k/${small / 1000}k: ${(results[large].broad.ms / results[small].broad.ms).toFixed(2)} (reference, not a goal)`);
} finally {
  await pgServer.stop();
}
