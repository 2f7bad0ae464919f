// The core of every request, before any data or area: configuration, the one error shape, the
// checks every request's input passes, load shedding, the public URL, OpenAPI, the data
// directory, the key that seals stored secrets, and traces when they are on.
import fp from 'fastify-plugin'
import configPlugin, { type Config } from './config.js'
import errorHandlerPlugin from './error-handler.js'
import responseHeadersPlugin from './response-headers.js'
import requestInputPlugin from './request-input.js'
import loadSheddingPlugin from './load-shedding.js'
import connectionsPlugin from './connections.js'
import publicUrlPlugin from './public-url.js'
import openapiPlugin from './openapi.js'
import dataDirPlugin from './data-dir.js'
import secretsPlugin from './secrets.js'
import tracingPlugin, { type TracingOptions } from './tracing.js'

export default fp<{ config: Config, tracing?: TracingOptions }>(async (fastify, opts) => {
  await fastify.register(configPlugin, { config: opts.config })
  // First: the request span starts before any other hook runs, and wraps every route added later.
  await fastify.register(tracingPlugin, opts.tracing ?? {})
  await fastify.register(errorHandlerPlugin)
  await fastify.register(responseHeadersPlugin)
  // JSON bodies, path and query parameters of every route.
  await fastify.register(requestInputPlugin)
  // Connection limits and deadlines, and the close of a connection whose body is left unread.
  await fastify.register(connectionsPlugin)
  // Before any route is added, so that every route but liveness is shed under overload.
  await fastify.register(loadSheddingPlugin)
  await fastify.register(publicUrlPlugin)
  await fastify.register(openapiPlugin)
  await fastify.register(dataDirPlugin)
  await fastify.register(secretsPlugin)
}, { name: 'core' })
