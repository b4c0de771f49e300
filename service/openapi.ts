/**
 * The OpenAPI 3.1 document (`/openapi.json`) and the docs page (`/docs`), generated from the route
 * schemas so that what a user reads first is what the service does. Must be registered before
 * the routes it describes.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import pkg from '../package.json' with { type: 'json' };
import { WWW_AUTHENTICATE } from './auth.ts';

const DESCRIPTION = `A read-only catalogue of literary quotes.

Quote paths need HTTP Basic credentials, or \`X-Bypass-Auth: true\` where the server allows it
(\`AUTH_BYPASS=allow\`, the default). Checks run in this order, and the first that fails answers:
rate limit (429), authentication (401/403), parameters (400), data (404). Every error body is the
Error object. List, id and v1 responses carry an \`ETag\` and \`Cache-Control: private, max-age=60\`;
send the tag back in \`If-None-Match\` to get 304.`;

async function openApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // The package's version: one number to bump for a release.
      info: { title: 'Quotes service', version: pkg.version, description: DESCRIPTION },
      tags: [
        { name: 'quotes', description: 'The catalogue' },
        { name: 'operations', description: 'Probes for orchestrators' },
      ],
      components: {
        securitySchemes: {
          basicAuth: {
            type: 'http',
            scheme: 'basic',
            description: `name:password from AUTH_USERS / AUTH_USERS_FILE. Failures answer 401 with WWW-Authenticate: ${WWW_AUTHENTICATE}.`,
          },
          bypassAuth: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Bypass-Auth',
            description:
              'Send `true` (any case) to skip the credential check when AUTH_BYPASS=allow; with AUTH_BYPASS=deny it is 403 unless valid Basic credentials are also sent.',
          },
        },
      },
    },
    // Shared schemas keep their own names in components.schemas (Quote, Error…).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Registers the document generator, `/openapi.json` and the `/docs` page. */
export default fp(openApi, { name: 'openapi' });
