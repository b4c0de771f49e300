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
import { MAX_VALUE_LENGTH } from './catalogue/port.ts';
import { TEXT_KIND, type TextKind } from './schemas.ts';
import { foldedTextPattern, wordTextPattern } from './text-patterns.ts';

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
    transformObject: (document) =>
      'openapiObject' in document
        ? withTextSchemas(document.openapiObject as OpenApiDocument)
        : document.swaggerObject,
    // Shared schemas keep their own names in components.schemas (Quote, Error…).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

type SchemaObject = Record<string, unknown>;
interface OpenApiDocument {
  paths?: Record<string, Record<string, { parameters?: { schema?: SchemaObject }[] }>>;
  components?: { schemas?: Record<string, SchemaObject> };
}

/** The shared schema each kind of text value refers to, by name. */
const TEXT_SCHEMAS: Record<TextKind, { name: string; schema: () => SchemaObject }> = {
  folded: {
    name: 'FoldedText',
    schema: () => ({
      type: 'string',
      minLength: 1,
      maxLength: MAX_VALUE_LENGTH,
      pattern: foldedTextPattern(),
      description:
        'A text compared in folded form: something must be left once folded (not only white space and combining marks); no NUL',
    }),
  },
  words: {
    name: 'WordText',
    schema: () => ({
      type: 'string',
      minLength: 1,
      maxLength: MAX_VALUE_LENGTH,
      pattern: wordTextPattern(),
      description: 'Word prefixes: at least one letter or digit once folded; no NUL',
    }),
  },
};

/**
 * The document with every text value marked {@link TEXT_KIND} replaced by a reference to its
 * shared schema: the patterns are long (they list characters), so each is written once. Runs
 * once, when the document is first asked for.
 */
function withTextSchemas(document: OpenApiDocument): OpenApiDocument {
  const used = new Set<TextKind>();
  const refer = (schema: SchemaObject | undefined): SchemaObject | undefined => {
    const kind = schema?.[TEXT_KIND] as TextKind | undefined;
    if (kind === undefined) return schema;
    used.add(kind);
    return { $ref: `#/components/schemas/${TEXT_SCHEMAS[kind].name}` };
  };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) {
        const schema = parameter.schema;
        if (schema === undefined) continue;
        if (schema.type === 'array') schema.items = refer(schema.items as SchemaObject | undefined);
        else parameter.schema = refer(schema);
      }
    }
  }
  document.components ??= {};
  document.components.schemas ??= {};
  for (const kind of used) document.components.schemas[TEXT_SCHEMAS[kind].name] = TEXT_SCHEMAS[kind].schema();
  return document;
}

/** Registers the document generator, `/openapi.json` and the `/docs` page. */
export default fp(openApi, { name: 'openapi' });
