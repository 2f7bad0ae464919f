-- Adapter ids are unique under folding (lib/orchestrator/adapter-id.ts: Unicode NFKC, case, runs of
-- spaces), so that look-alikes ('Local NSO', 'Local  NSO', 'LOCAL NSO', full-width letters) cannot
-- be two adapters. `id_key` holds the folded id; the service writes it with every adapter it creates.
ALTER TABLE orchestrator_adapters ADD COLUMN id_key text;

-- An id of printable ASCII folds to lower case with runs of spaces made one: done here, with
-- translate() because lower() follows the database's collation. Every id of the earlier rule
-- (migration 003) is such an id. The service keys the others, in JavaScript, when it starts.
-- Existing look-alikes: the oldest of each group (created_at, then id) takes the key; the others
-- keep a NULL key, stay reachable by their exact id, and are logged at start (docs/orchestrator.md).
UPDATE orchestrator_adapters AS a SET id_key = keyed.key
FROM (
  SELECT id, key, row_number() OVER (PARTITION BY key ORDER BY created_at, id) AS rank
  FROM (
    SELECT id, created_at,
      translate(regexp_replace(id, ' {2,}', ' ', 'g'), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') AS key
    FROM orchestrator_adapters
    WHERE id ~ '^[ -~]+$'
  ) AS folded
) AS keyed
WHERE a.id = keyed.id AND keyed.rank = 1;

CREATE UNIQUE INDEX orchestrator_adapters_id_key ON orchestrator_adapters (id_key);
