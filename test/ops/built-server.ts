// The service as the container image has it: built from the Docker build context (the project
// less .dockerignore) with `npm run build`, and started as `node dist/server.js` in a process of
// its own. The build is cached in the system's temp directory by a digest of that context (outside
// the project, so the test runner's coverage does not count the copies).
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cp, mkdir, readdir, readFile, realpath, rename, rm, stat, symlink } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '../helpers/until.js'

const run = promisify(execFile)
export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** A .dockerignore pattern as a test on a context-relative path (Docker's syntax, no "!"). */
export function dockerignoreMatcher (text: string): (file: string) => boolean {
  const patterns = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
  const regexes = patterns.map((pattern) => {
    if (pattern.startsWith('!')) throw new Error(`.dockerignore: exceptions ("${pattern}") are not supported by this check`)
    const body = pattern.replace(/^\/+|\/+$/g, '').split(/(\*\*\/|\*\*|\*|\?)/).map((part) => {
      switch (part) {
        case '**/': return '(?:.*/)?'
        case '**': return '.*'
        case '*': return '[^/]*'
        case '?': return '[^/]'
        default: return part.replace(/[.+^${}()|[\]\\]/g, '\\$&')
      }
    }).join('')
    return new RegExp(`^${body}$`)
  })
  // A pattern that matches a directory excludes everything below it.
  return (file) => {
    const parts = file.split('/')
    return parts.some((_, i) => regexes.some((re) => re.test(parts.slice(0, i + 1).join('/'))))
  }
}

/** The files of the build context, relative to ROOT, sorted. */
export async function buildContext (): Promise<string[]> {
  const ignored = dockerignoreMatcher(await readFile(path.join(ROOT, '.dockerignore'), 'utf8'))
  const files: string[] = []
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = dir === '' ? entry.name : `${dir}/${entry.name}`
      // Never worth walking, whatever .dockerignore says.
      if (rel === '.git' || rel === 'node_modules' || ignored(rel)) continue
      if (entry.isDirectory()) await walk(rel)
      else if (entry.isFile()) files.push(rel)
    }
  }
  await walk('')
  return files.sort()
}

const exists = async (file: string): Promise<boolean> => await stat(file).then(() => true, () => false)

/**
 * What the image's build stage produces: a copy of the build context with `npm run build` run in
 * it. Returns that directory (its `dist/` is what the image ships). Parallel test processes build
 * it once: one holds a lock directory while the others wait.
 */
export async function imageBuild (): Promise<string> {
  const files = await buildContext()
  const digest = createHash('sha256')
  for (const file of files) digest.update(`${file}\0`).update(await readFile(path.join(ROOT, file))).update('\0')
  digest.update(ROOT)
  const dir = path.join(os.tmpdir(), `netauto-image-build-${digest.digest('hex').slice(0, 16)}`)
  const lock = `${dir}.lock`
  let locked = false
  await until(async () => {
    if (await exists(path.join(dir, 'dist', 'server.js'))) return true
    try {
      await mkdir(lock)
      locked = true
      return true
    } catch {
      // Someone else builds; a lock left by a killed process is taken over after five minutes.
      const age = Date.now() - (await stat(lock).then((s) => s.mtimeMs, () => Date.now()))
      if (age > 300_000) await rm(lock, { recursive: true, force: true })
      return false
    }
  }, `the build at ${dir} is made, or its lock is free`, 600_000)
  if (!locked) return dir
  try {
    if (await exists(path.join(dir, 'dist', 'server.js'))) return dir
    const partial = `${dir}.${process.pid}.partial`
    await rm(partial, { recursive: true, force: true })
    for (const file of files) await cp(path.join(ROOT, file), path.join(partial, file))
    await symlink(await realpath(path.join(ROOT, 'node_modules')), path.join(partial, 'node_modules'), 'dir')
    await run('npm', ['run', '--silent', 'build'], { cwd: partial, env: cleanEnv() })
    await rm(dir, { recursive: true, force: true })
    await rename(partial, dir)
    return dir
  } finally {
    await rm(lock, { recursive: true, force: true })
  }
}

/**
 * An environment with nothing of the test runner's (its NODE_OPTIONS loaders and coverage), so a
 * child runs as it would in the image.
 */
export function cleanEnv (env: Record<string, string> = {}): Record<string, string> {
  const keep: Record<string, string> = {}
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name]
    if (value !== undefined) keep[name] = value
  }
  return { ...keep, ...env }
}

export interface LogLine {
  msg?: string
  reqId?: string
  level?: number
  [field: string]: unknown
}

export interface BuiltServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  readonly child: ChildProcess
  /** Every JSON log line so far. */
  readonly lines: LogLine[]
  /** Standard output and error as text, for failure messages. */
  output: () => string
  /** Resolves with the first log line (past or future) that `match` accepts. */
  waitForLine: (match: (line: LogLine) => boolean) => Promise<LogLine>
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  /** SIGKILL if still running (test clean-up). */
  kill: () => Promise<void>
}

/**
 * Starts `node <dist>/server.js` (cwd: `cwd`) on 127.0.0.1 and a port of the system's choosing,
 * with `env` on top of a clean environment, and resolves once it listens. `wrapper`: a command
 * that runs node (e.g. `['prlimit', '--nofile=512']`).
 */
export async function startBuiltServer (dist: string, cwd: string, env: Record<string, string>, options: { wrapper?: string[] } = {}): Promise<BuiltServer> {
  const [command = process.execPath, ...args] = [...(options.wrapper ?? []), process.execPath, path.join(dist, 'server.js')]
  const child = spawn(command, args, {
    cwd,
    // As in test/helper.ts: a test machine that runs several test files at once stalls at times,
    // which the service would answer with 503s (load shedding); no test here is about that.
    env: cleanEnv({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: LogLine[] = []
  let text = ''
  const waiters: Array<{ match: (line: LogLine) => boolean, resolve: (line: LogLine) => void }> = []
  let pending = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString()
    pending += chunk.toString()
    const complete = pending.split('\n')
    pending = complete.pop() ?? ''
    for (const raw of complete) {
      let line: LogLine
      try { line = JSON.parse(raw) as LogLine } catch { continue }
      lines.push(line)
      for (const waiter of [...waiters]) {
        if (waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve(line)
        }
      }
    }
  })
  child.stderr?.on('data', (chunk: Buffer) => { text += chunk.toString() })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => { resolve({ code, signal }) })
  })
  const output = (): string => text

  const waitForLine = async (match: (line: LogLine) => boolean): Promise<LogLine> => {
    const seen = lines.find(match)
    if (seen !== undefined) return seen
    return await new Promise<LogLine>((resolve, reject) => {
      waiters.push({ match, resolve })
      void exited.then(({ code, signal }) => {
        // Lines printed just before the exit have been parsed by now.
        const last = lines.find(match)
        if (last !== undefined) resolve(last)
        else reject(new Error(`the server exited (${String(code ?? signal)}) first:\n${text}`))
      })
    })
  }

  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exited
    }
  }

  const listening = await Promise.race([
    waitForLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening at ')),
    sleep(120_000, undefined, { ref: false })
  ])
  if (listening === undefined) {
    await kill()
    throw new Error(`the server did not start listening:\n${text}`)
  }
  const url = (listening.msg ?? '').slice('Server listening at '.length)
  return { url, port: Number(new URL(url).port), child, lines, output, waitForLine, exited, kill }
}
