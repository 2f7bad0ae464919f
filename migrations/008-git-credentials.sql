-- Each user's own token per Git provider (PUT /users/:username/git-credentials/:gitType): Git calls
-- of that user go to the provider with it instead of the configured token. It is sent to the
-- provider, so it is encrypted (AES-256-GCM, the adapter passwords' key), never hashed, never returned.
CREATE TABLE git_credentials (
  username       text NOT NULL REFERENCES users (username) ON DELETE CASCADE ON UPDATE CASCADE,
  provider       text NOT NULL CHECK (provider ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  token_username text,
  token_sealed   text NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (username, provider)
);
