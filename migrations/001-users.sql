-- Users of the API: HTTP Basic credentials, roles and groups (for group-based access control).
CREATE TABLE users (
  username      text PRIMARY KEY CHECK (char_length(username) BETWEEN 1 AND 64),
  password_hash text NOT NULL,
  roles         text[] NOT NULL DEFAULT '{}',
  groups        text[] NOT NULL DEFAULT '{}',
  email         text,
  disabled      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
