-- Orchestrator adapters: where the relay sends an adapterId's calls, and with which credentials.
-- The password is encrypted (AES-256-GCM, key outside the database), never hashed: it is sent upstream.
-- `revision` comes from a sequence and changes on every update, so a value once seen never comes back
-- (not even when an adapter is deleted and created again): instances compare it to rebuild pools.
CREATE SEQUENCE orchestrator_adapter_revisions;

CREATE TABLE orchestrator_adapters (
  id                  text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
  base_url            text NOT NULL CHECK (base_url ~ '^https?://'),
  username            text NOT NULL,
  password_sealed     text NOT NULL,
  timeout_ms          integer NOT NULL CHECK (timeout_ms BETWEEN 100 AND 600000),
  reject_unauthorized boolean NOT NULL DEFAULT true,
  ca                  text,
  revision            bigint NOT NULL DEFAULT nextval('orchestrator_adapter_revisions'),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
