import t from 'tap'
import { pino, type LoggerOptions } from 'pino'
import { deferChildLoggers, LazyChildLogger } from '../../../lib/http/lazy-logger.js'

// A pino root writing to an array, counting the pino children it makes.
function root (options: LoggerOptions = {}, defer = true) {
  const lines: string[] = []
  let children = 0
  const logger = pino({ timestamp: false, base: null, onChild: () => { children++ }, ...options }, { write: (line: string) => { lines.push(line) } })
  if (defer) deferChildLoggers(logger)
  return { logger, lines, children: () => children }
}

t.test('a child that writes nothing at an enabled level makes no pino child', async (t) => {
  const { logger, lines, children } = root({ level: 'warn' })
  const child = logger.child({ reqId: 'r-1' })
  t.type(child, LazyChildLogger)
  child.info({ req: 'x' }, 'incoming request')
  child.debug('detail')
  t.equal(child.level, 'warn', 'reads its level without a child')
  t.equal(child.isLevelEnabled('info'), false)
  t.equal(children(), 0)
  t.same(lines, [])
})

t.test('lines written are those of a pino child, byte for byte', async (t) => {
  const lazy = root({ level: 'info', redact: ['password'] })
  const plain = root({ level: 'info', redact: ['password'] }, false)
  for (const { logger } of [lazy, plain]) {
    const child = logger.child({ reqId: 'r-2' })
    child.info({ user: 'ann', password: 'secret' }, 'hello %s', 'world')
    child.warn('plain message')
    child.error(new Error('boom'))
  }
  t.equal(lazy.lines.length, 3)
  // Error stacks name this file's lines, which differ between the two loops: compare the rest.
  const withoutStack = (line: string) => line.replace(/"stack":"[^"]*"/, '"stack":"..."')
  t.same(lazy.lines.map(withoutStack), plain.lines.map(withoutStack))
  t.match(lazy.lines[0], /"reqId":"r-2".*"password":"\[Redacted\]".*"msg":"hello world"/)
  t.equal(lazy.children(), 1, 'one pino child, made on the first line')
})

t.test('a level of its own (a route log level) decides, as it would for a pino child', async (t) => {
  const { logger, lines } = root({ level: 'info' })
  const quiet = logger.child({ reqId: 'q' }, { level: 'warn' })
  quiet.info('not written')
  quiet.warn('written')
  const verbose = logger.child({ reqId: 'v' }, { level: 'debug' })
  verbose.debug('written too')
  verbose.trace('not written')
  const silent = logger.child({ reqId: 's' }, { level: 'silent' })
  silent.fatal('never')
  t.equal(silent.isLevelEnabled('fatal'), false)
  t.same(lines.map((l) => (JSON.parse(l) as { msg: string }).msg), ['written', 'written too'])
  t.equal(quiet.level, 'warn')
  quiet.level = 'info'
  quiet.info('written once its level is set')
  t.equal(lines.at(-1)?.includes('written once its level is set'), true)
})

t.test('setting the level of a child sets it on its own pino child only', async (t) => {
  const { logger, lines, children } = root({ level: 'info' })
  const child = logger.child({ reqId: 'r-3' })
  child.level = 'debug'
  t.equal(children(), 1)
  child.debug('now written')
  t.equal(child.level, 'debug')
  t.equal(logger.level, 'info', 'the root keeps its level')
  t.equal(lines.length, 1)
  t.equal((child as unknown as LazyChildLogger).logger.bindings().reqId, 'r-3', 'the pino child is reachable')
})

t.test('children of a child carry both bindings and are lazy too', async (t) => {
  const { logger, lines, children } = root({ level: 'info' })
  const request = logger.child({ reqId: 'r-4' })
  const part = request.child({ part: 'git' })
  t.equal(children(), 1, 'the request child was made to bind its own child to')
  t.type(part, LazyChildLogger)
  part.debug('below the level')
  t.equal(children(), 1)
  part.info('from the part')
  t.match(JSON.parse(lines[0] ?? '{}'), { reqId: 'r-4', part: 'git', msg: 'from the part' })
  ;(part as unknown as LazyChildLogger).silent()
  t.equal(lines.length, 1)
})

t.test('each level writes at its own level', async (t) => {
  const { logger, lines } = root({ level: 'trace' })
  const child = logger.child({ reqId: 'r-5' })
  child.trace('t'); child.debug('d'); child.info('i'); child.warn('w'); child.error('e'); child.fatal('f')
  t.same(lines.map((l) => (JSON.parse(l) as { level: number }).level), [10, 20, 30, 40, 50, 60])
})

t.test('a child follows its parent\'s level unless it has one of its own (one that differs), as a pino child does', async (t) => {
  const lazy = root({ level: 'info' })
  const plain = root({ level: 'info' }, false)
  for (const { logger } of [lazy, plain]) {
    const before = logger.child({ reqId: 'made-at-info' })
    const written = logger.child({ reqId: 'made-at-info-then-written' })
    const sameAsParent = logger.child({ reqId: 'own-level-info' }, { level: 'info' })
    const own = logger.child({ reqId: 'own-level-warn' }, { level: 'warn' })
    written.info('first')
    logger.level = 'debug'
    const after = logger.child({ reqId: 'made-at-debug' })
    for (const child of [before, written, sameAsParent, own, after]) child.debug('debug line')
    logger.level = 'error'
    for (const child of [before, written, sameAsParent, own, after]) child.warn('warn line')
  }
  t.same(lazy.lines, plain.lines, 'the same lines as pino children write')
  t.same(lazy.lines.map((l) => (JSON.parse(l) as { reqId: string, msg: string })).map(({ reqId, msg }) => `${reqId}: ${msg}`), [
    'made-at-info-then-written: first',
    'made-at-info: debug line',
    'made-at-info-then-written: debug line',
    'own-level-info: debug line',
    'made-at-debug: debug line',
    'own-level-warn: warn line'
  ])
})
