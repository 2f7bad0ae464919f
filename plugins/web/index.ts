import fp from 'fastify-plugin'
import fastifyStatic from '@fastify/static'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyReply } from 'fastify'
import { pathOf } from '../../lib/http/public-url.js'

/**
 * Where `npm run build` puts the page (Vite's output): dist/web, beside the compiled service, both
 * when the service runs compiled (dist/plugins/web/) and from its sources (plugins/web/, in tests).
 */
const here = fileURLToPath(new URL('../..', import.meta.url))
export const PAGE_DIR = path.basename(here) === 'dist' ? path.join(here, 'web') : path.join(here, 'dist', 'web')

/** The page's own prefixes: the contract's studio path and the platform's; edit links point at both. */
export const PAGE_PREFIXES = ['/studio/', '/automation-studio/'] as const

/**
 * The page's policy: its own scripts, styles and API calls only; nothing inline, no other origin,
 * no frames, no plugins, forms only to itself.
 */
export const PAGE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "font-src 'self'", "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'", "object-src 'none'"
].join('; ')

/** Hashed names (assets/<name>-<hash>.<ext>) never change content: cached for a year. The HTML is revalidated each time. */
function cacheHeaders (reply: FastifyReply, file: string): void {
  const asset = file.split(path.sep).includes('assets')
  void reply.header('cache-control', asset ? 'public, max-age=31536000, immutable' : 'no-cache')
  if (!asset) {
    void reply.header('content-security-policy', PAGE_CSP)
    void reply.header('referrer-policy', 'no-referrer')
  }
}

/**
 * The studio page (web/, built by Vite into dist/web) at /studio/ and /automation-studio/: open
 * routes, since the page signs its user in itself. Each file is a route of its own (no wildcard),
 * so every other path under these prefixes stays the API's (or a 404). Gzipped copies made at
 * build time are sent to clients that accept them.
 */
export interface WebOptions {
  /** Where the built page is; PAGE_DIR unless given. */
  root?: string
}

export default fp(async (fastify, options: WebOptions) => {
  const root = options.root ?? PAGE_DIR
  const built = existsSync(path.join(root, 'index.html'))
  for (const prefix of PAGE_PREFIXES) {
    await fastify.register(async (scope) => {
      // The router ignores a trailing slash, but the page's relative URLs need it: `<prefix>/studio`
      // is sent to `studio/`, relative, so that it holds under a proxy's path prefix too.
      const bare = prefix.slice(0, -1)
      scope.addHook('onRequest', async (request, reply) => {
        if (pathOf(request.url) === bare) await reply.redirect(`${bare.slice(1)}/`, 301)
      })
      if (!built) {
        scope.get(prefix, { schema: { hide: true } }, async (_request, reply) => await reply.code(404).send({
          statusCode: 404, error: 'Not Found', message: 'The studio page is not built: run npm run build'
        }))
        return
      }
      await scope.register(fastifyStatic, {
        root,
        prefix,
        wildcard: false,
        decorateReply: false,
        cacheControl: false,
        preCompressed: true,
        index: ['index.html'],
        setHeaders: cacheHeaders
      })
    })
  }
}, { name: 'web' })
