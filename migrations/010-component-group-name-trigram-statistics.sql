-- Which trigrams most component group names share, for `contains` to leave them out of its
-- trigram index look-up (lib/http/trigram-search.ts): statistics on the names' trigrams, which
-- ANALYZE (and autovacuum) keeps current, read from pg_stats_ext_exprs. Only where the trigram
-- index of migration 006 exists.
DO $$
DECLARE
  trgm_schema text;
BEGIN
  IF to_regclass('component_groups_name_trgm') IS NULL THEN
    RETURN;
  END IF;
  SELECT quote_ident(n.nspname) INTO trgm_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  EXECUTE format('CREATE STATISTICS component_groups_name_trigrams ON (%s.show_trgm(name COLLATE "default")) FROM component_groups', trgm_schema);
END
$$;
