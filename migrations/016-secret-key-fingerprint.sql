-- The fingerprint of the key that seals the stored secrets (plugins/core/secret-key-check.ts): an
-- HMAC of a constant under the key, never the key. One row; an instance started with another key
-- refuses to start.
CREATE TABLE secret_key_fingerprint (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  fingerprint text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
