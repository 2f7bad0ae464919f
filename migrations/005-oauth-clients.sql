-- OAuth 2.0 clients (client credentials grant): service accounts acting as a user, with that
-- user's roles and groups. The secret is kept as its SHA-256 only (it is 256 random bits).
-- Deleting the user deletes its clients; deleting a client deletes its access tokens.
CREATE TABLE oauth_clients (
  client_id     text PRIMARY KEY CHECK (client_id ~ '^[0-9a-f]{24}$'),
  secret_digest text NOT NULL CHECK (char_length(secret_digest) = 64),
  username      text NOT NULL REFERENCES users (username) ON DELETE CASCADE ON UPDATE CASCADE,
  name          text NOT NULL DEFAULT '',
  created_by    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_clients_username ON oauth_clients (username);

ALTER TABLE sessions ADD CONSTRAINT sessions_client_id_fkey
  FOREIGN KEY (client_id) REFERENCES oauth_clients (client_id) ON DELETE CASCADE;
CREATE INDEX sessions_client_id ON sessions (client_id);
