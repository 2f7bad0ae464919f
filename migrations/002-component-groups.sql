-- Studio component groups (spec 2.1). The document lives in `doc` (description, members, meta);
-- what the database enforces or filters on is a real column: the id, the unique name, the version
-- that only SQL increments, and the group lists that reads filter on.
CREATE TABLE component_groups (
  id          text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  name        text NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 255),
  version     integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  gbac_read   text[] NOT NULL DEFAULT '{}',
  gbac_write  text[] NOT NULL DEFAULT '{}',
  doc         jsonb NOT NULL CHECK (jsonb_typeof(doc) = 'object'),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
