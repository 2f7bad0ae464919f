// How credentials travel over HTTP: the realm and challenges, the session cookie, and the OpenAPI
// security schemes that say so.
export const REALM = 'netauto'
/** The cookie that carries a session token (the platform's clients read and send this name). */
export const TOKEN_COOKIE = 'token'
export const BASIC_CHALLENGE = `Basic realm="${REALM}"`
/** The challenge of a request that presented a token (Bearer, cookie or query parameter). */
export const TOKEN_CHALLENGE = `${BASIC_CHALLENGE}, Bearer realm="${REALM}", error="invalid_token"`

/** The OpenAPI security requirement of every authenticated route: any one of these. */
export const SECURITY: Array<Record<string, string[]>> = [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }]
