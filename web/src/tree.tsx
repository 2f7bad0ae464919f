// The members as a tree of folders: add, rename and remove, by keyboard as by mouse.
import { useState } from 'preact/hooks'
import {
  addComponent, addFolder, buildTree, folderPaths, nameProblem, removeNode, renameNode, type Member, type TreeNode
} from '../../lib/studio-ui/member-tree'
import { ErrorMessage } from './ui'

interface Props { members: Member[], readOnly: boolean, onChange: (members: Member[]) => void }

const parentOf = (node: TreeNode): string[] => node.path.slice(0, -1)

function Node ({ node, members, readOnly, onChange }: Props & { node: TreeNode }) {
  const [renaming, setRenaming] = useState(false)
  const [name, setName] = useState(node.name)
  const [error, setError] = useState<string>()
  const label = `${node.kind === 'folder' ? 'folder' : 'component'} ${node.path.join('/')}`
  const apply = (event: Event): void => {
    event.preventDefault()
    const problem = name === node.name ? undefined : nameProblem(members, parentOf(node), name, node.kind)
    if (problem !== undefined) { setError(problem); return }
    onChange(renameNode(members, node, name))
    setRenaming(false)
  }
  const member = node.member === undefined ? undefined : members[node.member]
  return (
    <li>
      <div class='node'>
        <span class={`kind ${node.kind}`} aria-hidden='true'>{node.kind === 'folder' ? '▸' : '•'}</span>
        {renaming
          ? (
            <form class='inline-form' onSubmit={apply}>
              <label for={`rename-${node.path.join('/')}`}>New name for {node.name}</label>
              <input id={`rename-${node.path.join('/')}`} value={name} required onInput={(e) => { setName(e.currentTarget.value) }} />
              <button type='submit'>Apply</button>
              <button type='button' onClick={() => { setRenaming(false); setError(undefined); setName(node.name) }}>Cancel</button>
            </form>
            )
          : <span class='node-name'>{node.name}{member !== undefined && 'ref' in member ? <small> ({member.sourceCollection}/{member.ref})</small> : null}</span>}
        {!readOnly && !renaming && (
          <span class='node-actions'>
            <button type='button' class='small' aria-label={`Rename ${label}`} onClick={() => { setRenaming(true) }}>Rename</button>
            <button type='button' class='small' aria-label={`Remove ${label}`} onClick={() => { onChange(removeNode(members, node)) }}>Remove</button>
          </span>
        )}
      </div>
      <ErrorMessage message={error} />
      {node.children.length > 0 && (
        <ul>{node.children.map((child) => <Node key={`${child.kind}:${child.name}`} node={child} members={members} readOnly={readOnly} onChange={onChange} />)}</ul>
      )}
    </li>
  )
}

function AddMember ({ members, onChange, folders }: Props & { folders: string[][] }) {
  const [kind, setKind] = useState<'folder' | 'component'>('folder')
  const [parent, setParent] = useState('')
  const [name, setName] = useState('')
  const [sourceCollection, setSourceCollection] = useState('automations')
  const [ref, setRef] = useState('')
  const [error, setError] = useState<string>()
  const add = (event: Event): void => {
    event.preventDefault()
    const parentPath = parent === '' ? [] : parent.split('/')
    const problem = nameProblem(members, parentPath, name, kind) ?? (kind === 'component' && (sourceCollection.trim() === '' || ref.trim() === '') ? 'A component needs a source collection and a reference' : undefined)
    if (problem !== undefined) { setError(problem); return }
    setError(undefined)
    onChange(kind === 'folder' ? addFolder(members, parentPath, name) : addComponent(members, parentPath, name, sourceCollection.trim(), ref.trim()))
    setName('')
    setRef('')
  }
  return (
    <form class='add-member' onSubmit={add} aria-label='Add a member'>
      <div><label for='member-kind'>Kind</label>
        <select id='member-kind' value={kind} onChange={(e) => { setKind(e.currentTarget.value === 'component' ? 'component' : 'folder') }}>
          <option value='folder'>Folder</option><option value='component'>Component</option>
        </select>
      </div>
      <div><label for='member-parent'>In folder</label>
        <select id='member-parent' value={parent} onChange={(e) => { setParent(e.currentTarget.value) }}>
          {folders.map((f) => <option key={f.join('/')} value={f.join('/')}>{f.length === 0 ? '(top level)' : `/${f.join('/')}`}</option>)}
        </select>
      </div>
      <div><label for='member-name'>Member name</label><input id='member-name' value={name} onInput={(e) => { setName(e.currentTarget.value) }} /></div>
      {kind === 'component' && (
        <>
          <div><label for='member-source'>Source collection</label><input id='member-source' value={sourceCollection} onInput={(e) => { setSourceCollection(e.currentTarget.value) }} /></div>
          <div><label for='member-ref'>Reference</label><input id='member-ref' value={ref} onInput={(e) => { setRef(e.currentTarget.value) }} /></div>
        </>
      )}
      <button type='submit'>Add member</button>
      <ErrorMessage message={error} />
    </form>
  )
}

export function MemberTree (props: Props) {
  const tree = buildTree(props.members)
  return (
    <fieldset>
      <legend>Members</legend>
      {tree.length === 0
        ? <p>No members.</p>
        : <ul class='tree' aria-label='Members'>{tree.map((node) => <Node key={`${node.kind}:${node.name}`} node={node} {...props} />)}</ul>}
      {!props.readOnly && <AddMember {...props} folders={folderPaths(tree)} />}
    </fieldset>
  )
}
