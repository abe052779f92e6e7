// Time of a cas-api user search at 100k users ÷ at 1k users (goal <= 2, issue 4): the trigram
// indexes of migration UserSearchIndexes1764000000000 must keep search time flat as users grow.
// Real embedded PostgreSQL, the CAS migrations and the built UserSearchRepository (the query the
// HTTP API runs, count included). The selective search (10 matches at both sizes) is the
// ratio; a broad search (matches grow with the table) is printed for reference.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { startPostgres } from '../libs/testing/dist/index.js';
import { runMigrations, dataSourceOptions } from '../apps/cas/dist/database/data-source.js';
import { UserSearchRepository } from '../apps/cas/dist/cas-api/user-search.repository.js';

const casRequire = createRequire(new URL('../apps/cas/package.json', import.meta.url));
const { DataSource } = await import(pathToFileURL(casRequire.resolve('typeorm')).href);

const SIZES = [1_000, 100_000];
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 200);
const GIVEN = ['Alice', 'Bruno', 'Chen', 'Dara', 'Emeka', 'Fatima', 'Goran', 'Hana', 'Ivan', 'Jun', 'Kofi', 'Lena', 'Mateo', 'Nia', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sami', 'Tara'];

const pg = await startPostgres({ fast: true });
const results = {};
try {
  for (const size of SIZES) {
    const url = await pg.createDatabase(`bench_users_${size}`);
    const config = { CAS_DATABASE_URL: url, CAS_DATABASE_POOL_SIZE: 4 };
    await runMigrations(config);
    const ds = new DataSource(dataSourceOptions(config));
    await ds.initialize();
    await ds.query(
      `INSERT INTO cas_accounts (username, email, given_name, family_name)
       SELECT 'user' || lpad(i::text, 6, '0'), 'user' || i || '@' || (ARRAY['example.org','mail.test','corp.example'])[1 + i % 3],
              ($1::text[])[1 + i % 20], 'Family' || (i % 5000)
       FROM generate_series(1, $2::int - 10) AS i`,
      [GIVEN, size],
    );
    await ds.query(`INSERT INTO cas_accounts (username, email, given_name, family_name)
                    SELECT 'rare' || i, 'rare' || i || '@zyx.example', 'Rare', 'Zyxwell' FROM generate_series(1, 10) AS i`);
    await ds.query('VACUUM ANALYZE cas_accounts'); // steady state, as autovacuum leaves it
    const repo = new UserSearchRepository(ds);
    const time = async (search) => {
      for (let i = 0; i < 100; i++) await repo.search({ search, offset: 0, limit: 20 }); // warm caches
      const start = process.hrtime.bigint();
      let count = 0;
      for (let i = 0; i < SEARCHES; i++) count = (await repo.search({ search, offset: 0, limit: 20 })).count;
      return { ms: Number(process.hrtime.bigint() - start) / 1e6 / SEARCHES, count };
    };
    results[size] = { selective: await time('zyxwell'), broad: await time('fatima') };
    console.log(`${size} users: search "zyxwell" ${results[size].selective.ms.toFixed(3)} ms (${results[size].selective.count} matches), search "fatima" ${results[size].broad.ms.toFixed(3)} ms (${results[size].broad.count} matches)`);
    await ds.destroy();
  }
  const [small, large] = SIZES;
  console.log(`ratio search time ${large / 1000}k/${small / 1000}k users: ${(results[large].selective.ms / results[small].selective.ms).toFixed(2)} (goal <= 2)`);
  console.log(`broad search (matches grow with users) ${large / 1000}k/${small / 1000}k: ${(results[large].broad.ms / results[small].broad.ms).toFixed(2)} (reference, not a goal)`);
} finally {
  await pg.stop();
}
