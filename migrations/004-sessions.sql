-- Session and access tokens: only their SHA-256 is kept. Every instance on the database honours
-- and revokes the same tokens. A login session has no client_id; an OAuth access token names the
-- client it was issued to. Deleting a user deletes its sessions.
CREATE TABLE sessions (
  token_digest text PRIMARY KEY CHECK (char_length(token_digest) = 64),
  username     text NOT NULL REFERENCES users (username) ON DELETE CASCADE ON UPDATE CASCADE,
  client_id    text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_username ON sessions (username);
CREATE INDEX sessions_expires_at ON sessions (expires_at);
