-- Component-group history: every create, replace, import, restore and delete of a group keeps the
-- group as it was after the change (a delete: as it was when deleted), written in the same
-- statement as the change. The columns mirror component_groups, so a version reads back as a group.
-- A version page reads the primary key backwards (newest first); retention deletes through it
-- from the oldest end, a few rows per change.
CREATE TABLE component_group_versions (
  group_id    text NOT NULL,
  version     integer NOT NULL CHECK (version >= 1),
  -- Order of deletes across groups (the list of deleted groups, newest first).
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  action      text NOT NULL CHECK (action IN ('create', 'replace', 'import', 'restore', 'delete')),
  actor       text NOT NULL,
  auth_method text NOT NULL,
  client_id   text,
  changed_at  timestamptz NOT NULL DEFAULT now(),
  name        text NOT NULL,
  gbac_read   text[] NOT NULL,
  gbac_write  text[] NOT NULL,
  doc         jsonb NOT NULL,
  PRIMARY KEY (group_id, version)
);
-- The deleted groups, newest delete first: only the delete entries are in this index.
CREATE INDEX component_group_versions_deletes ON component_group_versions (seq) WHERE action = 'delete';
