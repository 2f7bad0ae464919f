-- Component group names in byte order, as the platform (MongoDB) compares strings: the unique
-- index then serves `sort=name`, `equals` and `starts-with`, and the same names sort alike on
-- every database whatever its locale. Deterministic collations agree on equality, so uniqueness
-- is unchanged.
ALTER TABLE component_groups ALTER COLUMN name SET DATA TYPE text COLLATE "C";

-- `contains` and `starts-with` (ILIKE, folding case by the database's default collation, as the
-- lists' SQL asks) through a trigram index (pg_trgm). The extension lives once
-- per database, in whichever schema holds it already; else it is created in the current schema.
-- Where it cannot be created (no privilege), lists still answer, by reading names in order.
-- GIN's pending list (fastupdate) would make every read after a burst of writes scan it: off.
DO $$
DECLARE
  trgm_schema text;
BEGIN
  SELECT quote_ident(n.nspname) INTO trgm_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF trgm_schema IS NULL THEN
    BEGIN
      CREATE EXTENSION pg_trgm;
      trgm_schema := quote_ident(current_schema());
    EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
      RAISE NOTICE 'pg_trgm is not available (%): component group lists filter names without a trigram index', SQLERRM;
      RETURN;
    END;
  END IF;
  EXECUTE format('CREATE INDEX component_groups_name_trgm ON component_groups USING gin (name COLLATE "default" %s.gin_trgm_ops) WITH (fastupdate = off)', trgm_schema);
END
$$;
