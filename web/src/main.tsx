import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, call, type WhoAmI } from './api'
import { parseRoute, type Route } from './route'
import { ListView } from './list'
import { EditView } from './editor'
import { ErrorMessage } from './ui'
import './styles.css'

function useRoute (): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const update = (): void => { setRoute(parseRoute(location.hash)) }
    addEventListener('hashchange', update)
    return () => { removeEventListener('hashchange', update) }
  }, [])
  return route
}

function SignIn ({ onSignedIn }: { onSignedIn: () => void }) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    const result = await call(api.POST('/login', { body: { user: { username, password } } }))
    setBusy(false)
    if (result.ok) onSignedIn()
    else setError(result.status === 401 ? 'Sign-in failed: wrong username or password.' : result.message)
  }
  return (
    <main class='narrow'>
      <h1>Sign in to the studio</h1>
      <form onSubmit={(e) => { void submit(e) }}>
        <label for='username'>Username</label>
        <input id='username' name='username' autocomplete='username' required value={username} onInput={(e) => { setUsername(e.currentTarget.value) }} />
        <label for='password'>Password</label>
        <input id='password' name='password' type='password' autocomplete='current-password' required value={password} onInput={(e) => { setPassword(e.currentTarget.value) }} />
        <ErrorMessage message={error} />
        <button type='submit' disabled={busy}>Sign in</button>
      </form>
    </main>
  )
}

function App () {
  const route = useRoute()
  const [user, setUser] = useState<WhoAmI | null | undefined>(undefined)
  const [error, setError] = useState<string>()
  const load = async (): Promise<void> => {
    setError(undefined)
    const result = await call(api.GET('/whoami', {}))
    if (result.ok) setUser(result.data)
    else if (result.status === 401) setUser(null)
    else setError(result.message)
  }
  useEffect(() => { void load() }, [])
  const signOut = async (): Promise<void> => {
    const result = await call(api.POST('/logout', {}))
    if (result.ok || result.status === 401) setUser(null)
    else setError(result.message)
  }
  if (error !== undefined) {
    return <main class='narrow'><ErrorMessage message={error} /><button type='button' onClick={() => { void load() }}>Try again</button></main>
  }
  if (user === undefined) return <main class='narrow'><p role='status'>Loading…</p></main>
  if (user === null) return <SignIn onSignedIn={() => { void load() }} />
  return (
    <>
      <header class='bar'>
        <a class='brand' href='#/'>Studio: component groups</a>
        <span class='who'>Signed in as <strong>{user.username}</strong></span>
        <button type='button' onClick={() => { void signOut() }}>Sign out</button>
      </header>
      {route.view === 'edit'
        ? <EditView key={`${route.id}`} id={route.id} tab={route.tab} user={user} onSignedOut={() => { setUser(null) }} />
        : <ListView user={user} onSignedOut={() => { setUser(null) }} />}
    </>
  )
}

const root = document.getElementById('app')
if (root !== null) render(<App />, root)
