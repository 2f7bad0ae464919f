// Small pieces shared by the views.
import type { WhoAmI } from './api'
import { mayWrite } from '../../lib/studio/gbac'

/** An error, read out by screen readers as it appears; nothing when there is none. */
export function ErrorMessage ({ message }: { message: string | undefined }) {
  if (message === undefined) return null
  return <p class='error' role='alert'>{message}</p>
}

export function Notice ({ message }: { message: string | undefined }) {
  if (message === undefined) return null
  return <p class='notice' role='status'>{message}</p>
}

const WRITER_ROLES = ['admin', 'designer', 'apiwrite']

/** The caller's groups and roles as the access rules take them. */
export const gbacUser = (user: WhoAmI): { roles: string[], groups: string[] } =>
  ({ roles: user.roles, groups: user.groups.map((g) => g.name) })

export const isWriter = (user: WhoAmI): boolean => user.roles.some((r) => WRITER_ROLES.includes(r))
export const isAdmin = (user: WhoAmI): boolean => user.roles.includes('admin')

/** Whether `user` may change a group with these lists: a writer's role, and the group's lists (admins: always). */
export const mayEdit = (user: WhoAmI, lists: { gbacRead: string[], gbacWrite: string[] }): boolean =>
  isWriter(user) && mayWrite(gbacUser(user), lists)

/** A list of group names as typed in a field: comma-separated, blanks dropped, each once. */
export const parseGroups = (text: string): string[] =>
  [...new Set(text.split(',').map((g) => g.trim()).filter((g) => g !== ''))]

export const formatTime = (iso: string): string => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}
