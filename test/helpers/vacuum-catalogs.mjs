// Run by tap before the test files (before-tests.mjs). Each test takes a schema of its
// own on the PostgreSQL server and drops it after; the catalog rows this leaves dead are removed
// by autovacuum, and where a server runs without it (CI's does) they pile up run after run until
// every CREATE, migration and plan of the suite reads through them (a run took 19 minutes instead
// of 6). A VACUUM of the catalogs the schemas fill takes them away; it never fails the run.
import pg from 'pg'

const url = process.env.TEST_DATABASE_URL
if (url !== undefined && url !== '') {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, statement_timeout: 120_000 })
  try {
    await client.connect()
    const started = Date.now()
    await client.query(`VACUUM pg_catalog.pg_attribute, pg_catalog.pg_class, pg_catalog.pg_depend, pg_catalog.pg_type,
      pg_catalog.pg_index, pg_catalog.pg_constraint, pg_catalog.pg_attrdef, pg_catalog.pg_statistic, pg_catalog.pg_namespace,
      pg_catalog.pg_trigger, pg_catalog.pg_sequence, pg_catalog.pg_statistic_ext, pg_catalog.pg_statistic_ext_data`)
    process.stdout.write(`# the test database's catalogs vacuumed in ${Date.now() - started} ms\n`)
  } catch (err) {
    process.stdout.write(`# the test database's catalogs could not be vacuumed (${err instanceof Error ? err.message : String(err)}); the tests run anyway\n`)
  } finally {
    await client.end().catch(() => {})
  }
}
