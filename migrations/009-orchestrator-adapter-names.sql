-- Adapter ids are names as users write them ('Local NSO'): up to 128 characters, spaces inside.
-- The API checks the characters allowed; the table keeps what must never be stored whatever the
-- caller: a '/', a backslash, control characters, surrounding spaces, an empty or over-long id.
ALTER TABLE orchestrator_adapters DROP CONSTRAINT orchestrator_adapters_id_check;
ALTER TABLE orchestrator_adapters ADD CONSTRAINT orchestrator_adapters_id_check CHECK (
  char_length(id) BETWEEN 1 AND 128
  AND id !~ '[/\\[:cntrl:]]'
  AND id = btrim(id)
);
