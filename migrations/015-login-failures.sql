-- Failed logins counted for the whole deployment (plugins/auth/login-failures-repository.ts): a row
-- per key, an HMAC of the client address (and of the username or client id it presented), never
-- the values themselves; a window starts at a key's first failure and ends at window_ends.
CREATE TABLE login_failures (
  key         text PRIMARY KEY,
  failures    integer NOT NULL,
  window_ends timestamptz NOT NULL
);

-- Ended windows are swept a small batch at a time, oldest first.
CREATE INDEX login_failures_window_ends ON login_failures (window_ends);
