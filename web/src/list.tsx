// The list: a page of the groups the user may read, through the list API (limit/skip, contains on
// the name, sorted by name), a form to create one, and for admins the deleted groups.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, asEntry, asGroup, call, ifMatch, type Group, type VersionEntry, type WhoAmI } from './api'
import { editHash } from './route'
import { ErrorMessage, Notice, formatTime, isAdmin, isWriter } from './ui'

const PAGE_SIZE = 20

interface Row { group: Group, lastChange?: VersionEntry }

function NewGroup ({ onSignedOut }: { onSignedOut: () => void }) {
  const [open, setOpen] = useState(false)
  const [name, setName] = useState('')
  const [error, setError] = useState<string>()
  const input = useRef<HTMLInputElement>(null)
  useEffect(() => { if (open) input.current?.focus() }, [open])
  const create = async (event: Event): Promise<void> => {
    event.preventDefault()
    setError(undefined)
    const result = await call(api.POST('/studio/component-groups', { body: { componentGroup: { name, gbacRead: [], members: [] } } }))
    if (result.ok) location.hash = editHash(result.data.created._id)
    else if (result.status === 401) onSignedOut()
    else setError(result.message)
  }
  if (!open) return <button type='button' onClick={() => { setOpen(true) }}>New component group</button>
  return (
    <form class='inline-form' onSubmit={(e) => { void create(e) }} aria-label='New component group'>
      <label for='new-name'>Name</label>
      <input id='new-name' ref={input} required value={name} onInput={(e) => { setName(e.currentTarget.value) }} />
      <button type='submit'>Create</button>
      <button type='button' onClick={() => { setOpen(false); setError(undefined) }}>Cancel</button>
      <ErrorMessage message={error} />
    </form>
  )
}

function DeletedGroups ({ onSignedOut }: { onSignedOut: () => void }) {
  const [items, setItems] = useState<VersionEntry[]>()
  const [error, setError] = useState<string>()
  const [notice, setNotice] = useState<string>()
  const load = async (): Promise<void> => {
    const result = await call(api.GET('/studio/component-groups/deleted', { params: { query: { limit: 100, skip: 0 } } }))
    if (result.ok) setItems(result.data.items.map(asEntry))
    else if (result.status === 401) onSignedOut()
    else setError(result.message)
  }
  useEffect(() => { void load() }, [])
  const restore = async (entry: VersionEntry): Promise<void> => {
    setError(undefined)
    setNotice(undefined)
    const result = await call(api.POST('/studio/component-groups/{id}/versions/{version}/restore', {
      params: { path: { id: entry._id, version: entry.version }, header: { 'if-match': ifMatch(entry.version) } }
    }))
    if (result.ok) {
      setNotice(`Restored "${result.data.updated.name}" as version ${result.data.updated.version}.`)
      await load()
    } else if (result.status === 401) onSignedOut()
    else setError(result.message)
  }
  return (
    <section aria-labelledby='deleted-title'>
      <h2 id='deleted-title'>Deleted groups</h2>
      <ErrorMessage message={error} />
      <Notice message={notice} />
      {items === undefined
        ? <p>Loading…</p>
        : items.length === 0
          ? <p>No deleted groups.</p>
          : (
            <ul class='plain'>
              {items.map((entry) => (
                <li key={entry._id}>
                  <span>{entry.name} (deleted by {entry.username}, {formatTime(entry.changedAt)})</span>{' '}
                  <button type='button' onClick={() => { void restore(entry) }} aria-label={`Restore ${entry.name}`}>Restore</button>
                </li>
              ))}
            </ul>
            )}
    </section>
  )
}

export function ListView ({ user, onSignedOut }: { user: WhoAmI, onSignedOut: () => void }) {
  const [search, setSearch] = useState('')
  const [order, setOrder] = useState<1 | -1>(1)
  const [skip, setSkip] = useState(0)
  const [rows, setRows] = useState<Row[]>()
  // The page shown: its place and the total, as the API answered them (not as asked).
  const [shown, setShown] = useState({ skip: 0, total: 0 })
  const [error, setError] = useState<string>()
  const [showDeleted, setShowDeleted] = useState(false)
  const latest = useRef(0)

  useEffect(() => {
    const ticket = ++latest.current
    const load = async (): Promise<void> => {
      setError(undefined)
      const query = { limit: PAGE_SIZE, skip, sort: 'name', order, ...(search.trim() === '' ? {} : { contains: search.trim() }) }
      const result = await call(api.GET('/studio/component-groups', { params: { query } }))
      if (ticket !== latest.current) return
      if (!result.ok) {
        if (result.status === 401) onSignedOut()
        else setError(result.message)
        return
      }
      const page: Row[] = result.data.items.map((item) => ({ group: asGroup(item) }))
      setRows(page)
      setShown({ skip: result.data.skip, total: result.data.total })
      // The last change of each group on the page: its newest version (one small read per row shown).
      const changes = await Promise.all(page.map(async (row) => await call(api.GET('/studio/component-groups/{id}/versions', {
        params: { path: { id: row.group._id }, query: { limit: 1, skip: 0 } }
      }))))
      if (ticket !== latest.current) return
      setRows(page.map((row, i) => {
        const change = changes[i]
        return change?.ok === true ? { ...row, lastChange: change.data.items.map(asEntry)[0] } : row
      }))
    }
    void load()
  }, [search, order, skip])

  const total = shown.total
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE))
  const pageNumber = Math.floor(shown.skip / PAGE_SIZE) + 1
  return (
    <main>
      <h1>Component groups</h1>
      <div class='toolbar'>
        <label for='search'>Search</label>
        <input id='search' type='search' value={search} placeholder='Part of a name' onInput={(e) => { setSearch(e.currentTarget.value); setSkip(0) }} />
        <button type='button' onClick={() => { setOrder(order === 1 ? -1 : 1); setSkip(0) }} aria-label={`Sort by name, ${order === 1 ? 'Z to A' : 'A to Z'}`}>
          Sort by name {order === 1 ? '(A–Z)' : '(Z–A)'}
        </button>
        {isWriter(user) && <NewGroup onSignedOut={onSignedOut} />}
        {isAdmin(user) && <button type='button' aria-pressed={showDeleted} onClick={() => { setShowDeleted(!showDeleted) }}>Deleted groups</button>}
      </div>
      <ErrorMessage message={error} />
      {rows === undefined
        ? <p role='status'>Loading…</p>
        : rows.length === 0
          ? <p role='status'>No component groups{search.trim() === '' ? '' : ` whose name contains "${search.trim()}"`}.</p>
          : (
            <table class='groups'>
              <caption class='visually-hidden'>Component groups, sorted by name</caption>
              <thead><tr><th scope='col'>Name</th><th scope='col'>Description</th><th scope='col'>Members</th><th scope='col'>Version</th><th scope='col'>Last change</th></tr></thead>
              <tbody>
                {rows.map(({ group, lastChange }) => (
                  <tr key={group._id}>
                    <td data-label='Name'><a href={editHash(group._id)}>{group.name}</a></td>
                    <td data-label='Description'>{group.description}</td>
                    <td data-label='Members'>{group.members.length}</td>
                    <td data-label='Version'>{group.version}</td>
                    <td data-label='Last change'>{lastChange === undefined ? '' : `${formatTime(lastChange.changedAt)} by ${lastChange.username} (${lastChange.action})`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            )}
      <nav class='pager' aria-label='Pages'>
        <button type='button' disabled={shown.skip === 0} onClick={() => { setSkip(Math.max(0, shown.skip - PAGE_SIZE)) }}>Previous page</button>
        <span>Page {pageNumber} of {pages} ({total} groups)</span>
        <button type='button' disabled={shown.skip + PAGE_SIZE >= total} onClick={() => { setSkip(shown.skip + PAGE_SIZE) }}>Next page</button>
      </nav>
      {showDeleted && <DeletedGroups onSignedOut={onSignedOut} />}
    </main>
  )
}
