-- OAuth clients become service accounts as the platform manages them: a principal of their own
-- (a name, a description, roles and groups set by admins) instead of a stand-in for a user. Each
-- client takes its user's roles and groups as they are now, so what its tokens may do is unchanged.
ALTER TABLE oauth_clients
  ADD COLUMN description text NOT NULL DEFAULT '',
  ADD COLUMN roles       text[] NOT NULL DEFAULT '{}',
  ADD COLUMN groups      text[] NOT NULL DEFAULT '{}',
  ADD COLUMN updated_by  text,
  ADD COLUMN updated_at  timestamptz NOT NULL DEFAULT now();
UPDATE oauth_clients c SET roles = u.roles, groups = u.groups, updated_by = c.created_by, updated_at = c.created_at
  FROM users u WHERE u.username = c.username;
UPDATE oauth_clients SET updated_by = created_by WHERE updated_by IS NULL;
ALTER TABLE oauth_clients ALTER COLUMN updated_by SET NOT NULL;
DROP INDEX oauth_clients_username;
ALTER TABLE oauth_clients DROP COLUMN username;
-- The platform lists service accounts by name.
CREATE INDEX oauth_clients_name ON oauth_clients (name, client_id);

-- An access token of a service account belongs to no user.
ALTER TABLE sessions ALTER COLUMN username DROP NOT NULL;
UPDATE sessions SET username = NULL WHERE client_id IS NOT NULL;
ALTER TABLE sessions ADD CONSTRAINT sessions_one_principal CHECK ((username IS NULL) <> (client_id IS NULL));
