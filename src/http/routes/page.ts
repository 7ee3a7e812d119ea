// The page for people at GET / (docs/page.md): its HTML, its modules of JavaScript and its CSS are
// files of src/http/page/, served as they are (no build step, nothing fetched from outside), under a
// content security policy that lets the page reach its own origin alone and run no inline code.

import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { namesEtag } from '../answer.js'

/** The files served, by name, with their type: nothing else of the folder is (a test, a declaration). */
const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'page.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
  'main.js': 'text/javascript; charset=utf-8',
  'rows.js': 'text/javascript; charset=utf-8',
  'tables.js': 'text/javascript; charset=utf-8',
  'age.js': 'text/javascript; charset=utf-8'
}

/**
 * Only the page's own origin, and no inline script or style (a style set through the DOM is no
 * inline style); no form is ever sent, so a token typed in never ends up in a URL.
 */
const POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

interface Served { bytes: Buffer, etag: string, type: string }

/** The page and its assets, open to anyone: the page asks for a token itself, for the routes it reads. */
export const page = fp(async (app) => { registerPage(app) }, { name: 'page', fastify: '5.x', dependencies: ['access'], encapsulate: true })

/** Serves `/` and the page's assets; each file is read on its first request and kept (the folder's few KB). */
function registerPage (app: FastifyInstance): void {
  const folder = new URL('../page/', import.meta.url)
  const served = new Map<string, Promise<Served>>()
  const read = async (name: string, type: string): Promise<Served> => {
    const bytes = await readFile(new URL(name, folder))
    return { bytes, type, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` }
  }
  const send = async (name: string, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const type = FILES[name]
    if (type === undefined) {
      reply.callNotFound()
      return reply
    }
    let file = served.get(name)
    if (file === undefined) {
      file = read(name, type)
      served.set(name, file)
      // A file that could not be read is tried again at the next request, not remembered as missing.
      file.catch(() => served.delete(name))
    }
    const { bytes, etag } = await file
    // Revalidated at each load (no-cache): a new version of the service shows its new page at once.
    reply.header('content-security-policy', POLICY).header('etag', etag).header('cache-control', 'no-cache')
    if (namesEtag(request.headers['if-none-match'], etag)) {
      request.outcome = 'not_modified'
      return await reply.code(304).send()
    }
    return await reply.type(type).send(bytes)
  }
  app.get('/', { config: { open: true }, schema: { hide: true } }, async (request, reply) => await send('index.html', request, reply))
  app.get('/page/:file', { config: { open: true }, schema: { hide: true } }, async (request, reply) => await send((request.params as { file: string }).file, request, reply))
}
