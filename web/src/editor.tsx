// A group's page: the editor (tab 0) and its history (tab 1).
import { useEffect, useState } from 'preact/hooks'
import { api, asEntry, asGroup, call, ifMatch, type Group, type VersionEntry, type WhoAmI } from './api'
import { editHash, LIST_HASH } from './route'
import { MemberTree } from './tree'
import { ErrorMessage, Notice, formatTime, mayEdit, parseGroups } from './ui'
import { diffGroups, memberLabel, type Change } from '../../lib/studio-ui/diff'
import type { Member } from '../../lib/studio-ui/member-tree'

interface Draft { name: string, description: string, members: Member[], gbacRead: string, gbacWrite: string }

const draftOf = (group: Group): Draft => ({
  name: group.name, description: group.description, members: group.members, gbacRead: group.gbacRead.join(', '), gbacWrite: group.gbacWrite.join(', ')
})

type Props = { id: string, tab: 0 | 1, user: WhoAmI, onSignedOut: () => void }

export function EditView ({ id, tab, user, onSignedOut }: Props) {
  const [group, setGroup] = useState<Group>()
  const [missing, setMissing] = useState<string>()
  const [error, setError] = useState<string>()
  // Kept here: the editor starts anew (from the saved version) after each save.
  const [saved, setSaved] = useState<string>()
  const load = async (): Promise<void> => {
    setError(undefined)
    setSaved(undefined)
    const result = await call(api.GET('/studio/component-groups/{id}', { params: { path: { id } } }))
    if (result.ok) setGroup(asGroup(result.data))
    else if (result.status === 401) onSignedOut()
    else if (result.status === 404 || result.status === 400) setMissing(result.message)
    else setError(result.message)
  }
  useEffect(() => { void load() }, [id])
  if (missing !== undefined) {
    return <main><h1>Component group not found</h1><p role='alert'>Not found: {missing}</p><p><a href={LIST_HASH}>Back to the list</a></p></main>
  }
  if (group === undefined) {
    return <main>{error === undefined ? <p role='status'>Loading…</p> : <><ErrorMessage message={error} /><button type='button' onClick={() => { void load() }}>Try again</button></>}</main>
  }
  return (
    <main>
      <p><a href={LIST_HASH}>← All component groups</a></p>
      <h1>{group.name} <small>version {group.version}</small></h1>
      <div role='tablist' aria-label='Views of this group' class='tabs'>
        <a role='tab' aria-selected={tab === 0} href={editHash(id, 0)}>Editor</a>
        <a role='tab' aria-selected={tab === 1} href={editHash(id, 1)}>History</a>
      </div>
      <div role='tabpanel'>
        {tab === 0
          ? <Editor key={group.version} group={group} user={user} saved={saved} onSaved={(g) => { setGroup(g); setSaved(`Saved: version ${g.version}.`) }} onReload={() => { void load() }} onSignedOut={onSignedOut} />
          : <History group={group} user={user} onRestored={setGroup} onReload={() => { void load() }} onSignedOut={onSignedOut} />}
      </div>
    </main>
  )
}

function Editor ({ group, user, saved, onSaved, onReload, onSignedOut }: { group: Group, user: WhoAmI, saved?: string, onSaved: (g: Group) => void, onReload: () => void, onSignedOut: () => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(group))
  const [error, setError] = useState<string>()
  const [conflict, setConflict] = useState(false)
  const [notice, setNotice] = useState<string | undefined>(saved)
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const readOnly = !mayEdit(user, group)
  const set = (change: Partial<Draft>): void => { setDraft({ ...draft, ...change }); setNotice(undefined) }

  const save = async (event: Event): Promise<void> => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    setConflict(false)
    const update = {
      name: draft.name,
      description: draft.description,
      members: draft.members,
      gbacRead: parseGroups(draft.gbacRead),
      gbacWrite: parseGroups(draft.gbacWrite),
      meta: group.meta
    }
    const result = await call(api.PUT('/studio/component-groups/{id}', {
      params: { path: { id: group._id }, header: { 'if-match': ifMatch(group.version) } }, body: { update }
    }))
    setBusy(false)
    if (result.ok) onSaved(asGroup(result.data.updated))
    else if (result.status === 401) onSignedOut()
    else if (result.status === 409 && /version/i.test(result.message)) setConflict(true)
    else setError(result.message)
  }
  const remove = async (): Promise<void> => {
    setError(undefined)
    const result = await call(api.DELETE('/studio/component-groups/{id}', {
      params: { path: { id: group._id }, header: { 'if-match': ifMatch(group.version) } }
    }))
    if (result.ok) location.hash = LIST_HASH
    else if (result.status === 401) onSignedOut()
    else if (result.status === 409) { setConfirming(false); setConflict(true) } else setError(result.message)
  }

  return (
    <form class='editor' onSubmit={(e) => { void save(e) }} aria-label='Edit component group'>
      {readOnly && <p class='notice' role='note'>Read-only: you may read this group but not change it.</p>}
      <label for='name'>Name</label>
      <input id='name' required readOnly={readOnly} value={draft.name} onInput={(e) => { set({ name: e.currentTarget.value }) }} />
      <label for='description'>Description</label>
      <textarea id='description' rows={3} readOnly={readOnly} value={draft.description} onInput={(e) => { set({ description: e.currentTarget.value }) }} />
      <MemberTree members={draft.members} readOnly={readOnly} onChange={(members) => { set({ members }) }} />
      <label for='gbac-read'>Read groups (gbacRead, comma-separated; empty: every user)</label>
      <input id='gbac-read' readOnly={readOnly} value={draft.gbacRead} onInput={(e) => { set({ gbacRead: e.currentTarget.value }) }} />
      <label for='gbac-write'>Write groups (gbacWrite, comma-separated; empty: every writer)</label>
      <input id='gbac-write' readOnly={readOnly} value={draft.gbacWrite} onInput={(e) => { set({ gbacWrite: e.currentTarget.value }) }} />
      {conflict && (
        <div class='error' role='alert'>
          <p>This group was changed by someone else since you opened it (it is no longer version {group.version}). Nothing was overwritten.</p>
          <button type='button' onClick={onReload}>Reload the latest version</button>
        </div>
      )}
      <ErrorMessage message={error} />
      <Notice message={notice} />
      <div class='actions'>
        <button type='submit' disabled={readOnly || busy}>Save</button>
        {!readOnly && !confirming && <button type='button' class='danger' onClick={() => { setConfirming(true) }}>Delete</button>}
      </div>
      {confirming && (
        <div class='confirm' role='alertdialog' aria-labelledby='confirm-text'>
          <p id='confirm-text'>Delete “{group.name}”? Its history is kept; an admin can restore it.</p>
          <button type='button' class='danger' onClick={() => { void remove() }}>Yes, delete</button>
          <button type='button' onClick={() => { setConfirming(false) }}>Cancel</button>
        </div>
      )}
    </form>
  )
}

function ChangeList ({ changes }: { changes: Change[] }) {
  if (changes.length === 0) return <p>Same content as the current version.</p>
  return (
    <ul class='diff'>
      {changes.map((change) => 'before' in change
        ? <li key={change.field}><strong>{change.field}</strong>: “{change.before}” → “{change.after}”</li>
        : (
          <li key={change.field}><strong>{change.field}</strong>:
            {change.added.map((a) => <span key={`+${a}`} class='added'> +{a}</span>)}
            {change.removed.map((r) => <span key={`-${r}`} class='removed'> −{r}</span>)}
          </li>
          ))}
    </ul>
  )
}

const HISTORY_PAGE = 25

function History ({ group, user, onRestored, onReload, onSignedOut }: { group: Group, user: WhoAmI, onRestored: (g: Group) => void, onReload: () => void, onSignedOut: () => void }) {
  const [items, setItems] = useState<VersionEntry[]>()
  const [total, setTotal] = useState(0)
  const [skip, setSkip] = useState(0)
  const [selected, setSelected] = useState<{ entry: VersionEntry, document: Group }>()
  const [error, setError] = useState<string>()
  const [notice, setNotice] = useState<string>()
  const [conflict, setConflict] = useState(false)
  const writable = mayEdit(user, group)
  const fail = (result: { status: number, message: string }): void => { if (result.status === 401) onSignedOut(); else setError(result.message) }
  useEffect(() => {
    void (async () => {
      const result = await call(api.GET('/studio/component-groups/{id}/versions', { params: { path: { id: group._id }, query: { limit: HISTORY_PAGE, skip } } }))
      if (result.ok) { setItems(result.data.items.map(asEntry)); setTotal(result.data.total) } else fail(result)
    })()
  }, [group._id, group.version, skip])
  const select = async (entry: VersionEntry): Promise<void> => {
    setError(undefined)
    const result = await call(api.GET('/studio/component-groups/{id}/versions/{version}', { params: { path: { id: group._id, version: entry.version } } }))
    if (result.ok) setSelected({ entry, document: asGroup(result.data.document ?? {}) })
    else fail(result)
  }
  const restore = async (): Promise<void> => {
    if (selected === undefined) return
    setError(undefined)
    setConflict(false)
    const result = await call(api.POST('/studio/component-groups/{id}/versions/{version}/restore', {
      params: { path: { id: group._id, version: selected.entry.version }, header: { 'if-match': ifMatch(group.version) } }
    }))
    if (result.ok) {
      setNotice(`Version ${selected.entry.version} restored as version ${result.data.updated.version}.`)
      setSelected(undefined)
      onRestored(asGroup(result.data.updated))
    } else if (result.status === 409 && /version/i.test(result.message)) setConflict(true)
    else fail(result)
  }
  return (
    <section aria-label='History'>
      <ErrorMessage message={error} />
      <Notice message={notice} />
      {conflict && (
        <div class='error' role='alert'>
          <p>This group was changed by someone else meanwhile: nothing was restored.</p>
          <button type='button' onClick={onReload}>Reload the latest version</button>
        </div>
      )}
      {items === undefined
        ? <p role='status'>Loading…</p>
        : (
          <ol class='versions' aria-label='Versions, newest first'>
            {items.map((entry) => (
              <li key={entry.version}>
                <button type='button' aria-pressed={selected?.entry.version === entry.version} onClick={() => { void select(entry) }}>
                  Version {entry.version}: {entry.action} by {entry.username}, {formatTime(entry.changedAt)}
                </button>
              </li>
            ))}
          </ol>
          )}
      <nav class='pager' aria-label='Versions pages'>
        <button type='button' disabled={skip === 0} onClick={() => { setSkip(Math.max(0, skip - HISTORY_PAGE)) }}>Newer versions</button>
        <button type='button' disabled={skip + HISTORY_PAGE >= total} onClick={() => { setSkip(skip + HISTORY_PAGE) }}>Older versions</button>
      </nav>
      {selected !== undefined && (
        <article class='version' aria-label={`Version ${selected.entry.version}`}>
          <h2>Version {selected.entry.version}</h2>
          <h3>Differences from the current version ({group.version})</h3>
          <ChangeList changes={diffGroups(group, selected.document)} />
          <h3>Document</h3>
          <dl>
            <dt>Name</dt><dd>{selected.document.name}</dd>
            <dt>Description</dt><dd>{selected.document.description}</dd>
            <dt>gbacRead</dt><dd>{selected.document.gbacRead.join(', ')}</dd>
            <dt>gbacWrite</dt><dd>{selected.document.gbacWrite.join(', ')}</dd>
            <dt>Members</dt><dd><ul>{selected.document.members.map((m, i) => <li key={i}>{memberLabel(m)}</li>)}</ul></dd>
          </dl>
          {writable && selected.entry.version !== group.version && <button type='button' onClick={() => { void restore() }}>Restore</button>}
        </article>
      )}
    </section>
  )
}
