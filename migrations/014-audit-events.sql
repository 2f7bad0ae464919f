-- The audit trail: one row per recorded write, login and denied request (docs/audit.md). Rows
-- are written in batches by each instance's flusher; `id` orders them as written (the sequence is
-- shared by every instance), `at` is when the request happened.
CREATE TABLE audit_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL,
  actor text,
  service_account text,
  address text NOT NULL,
  request_id text NOT NULL,
  action text NOT NULL,
  target text NOT NULL,
  outcome text NOT NULL,
  status integer NOT NULL,
  duration_ms double precision NOT NULL,
  details jsonb
);

-- A page filtered on one field reads that field's index in `id` order; the time range and the
-- retention's deletes read `at`.
CREATE INDEX audit_events_actor ON audit_events (actor, id);
CREATE INDEX audit_events_action ON audit_events (action, id);
CREATE INDEX audit_events_target ON audit_events (target, id);
CREATE INDEX audit_events_at ON audit_events (at);
