import { describe, expect, it } from 'vitest';
import { CatalogueUnavailableError } from './catalogue/port.ts';
import { ApiError, INTERNAL_DETAILS, methodNotAllowed, toApiError } from './errors.ts';

const fastifyError = (statusCode: number, code: string, message = 'framework text') =>
  Object.assign(new Error(message), { statusCode, code });

describe('toApiError', () => {
  it('passes ApiErrors through, with their headers', () => {
    const error = methodNotAllowed('POST', '/quotes');
    expect(toApiError(error)).toEqual({ apiError: error, internal: false });
    expect(error.toBody()).toEqual({
      code: 405,
      error: 'method_not_allowed',
      details: 'POST is not allowed on /quotes; use GET, HEAD',
    });
    expect(error.headers).toEqual({ allow: 'GET, HEAD' });
    const outage = new ApiError(503, 'Redis is unreachable');
    expect(toApiError(outage)).toEqual({ apiError: outage, internal: true });
  });

  it('answers an unreachable catalogue with 503 and hides its message', () => {
    const { apiError, internal } = toApiError(new CatalogueUnavailableError('ENOENT /srv/data/quotes.db'));
    expect(internal).toBe(true);
    expect(apiError.toBody()).toEqual({
      code: 503,
      error: 'service_unavailable',
      details: 'The quote catalogue is not available right now; try again in a few seconds',
    });
  });

  it('tells when to retry a catalogue that sheds load, and still hides its message', () => {
    const busy = new CatalogueUnavailableError('Meilisearch is busy (too_many_search_requests)', {
      retryAfterSeconds: 1,
    });
    const { apiError, internal } = toApiError(busy);
    expect(internal).toBe(true);
    expect(apiError.statusCode).toBe(503);
    expect(apiError.headers).toEqual({ 'retry-after': '1' });
    expect(apiError.toBody()).toEqual({
      code: 503,
      error: 'service_unavailable',
      details: 'The quote catalogue is busy; try again in 1 s',
    });
  });

  it('maps Fastify client errors to contract statuses with client-facing details', () => {
    expect(toApiError(fastifyError(400, 'FST_ERR_BAD_URL')).apiError.toBody()).toEqual({
      code: 400,
      error: 'bad_request',
      details: 'the URL is not valid: its path has malformed percent-encoding',
    });
    expect(toApiError(fastifyError(415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE')).apiError.toBody()).toMatchObject({
      code: 400,
      error: 'bad_request',
    });
    expect(toApiError(fastifyError(413, 'FST_ERR_CTP_BODY_TOO_LARGE')).apiError.details).toMatch(/too large/);
    expect(toApiError(fastifyError(418, 'SOMETHING_NEW', 'secret')).apiError.toBody()).toEqual({
      code: 400,
      error: 'bad_request',
      details: 'the request could not be understood',
    });
    expect(toApiError(fastifyError(404, 'FST_ERR_NOT_FOUND')).apiError.toBody().error).toBe('not_found');
    expect(
      toApiError(fastifyError(429, 'RATE', 'limit of 100 per minute reached')).apiError.toBody(),
    ).toEqual({
      code: 429,
      error: 'too_many_requests',
      details: 'limit of 100 per minute reached',
    });
  });

  it('answers anything else with a 500 that says nothing about the cause', () => {
    for (const thrown of [
      new TypeError('x is undefined at /app/secret.ts:3'),
      'a string',
      null,
      { statusCode: 502 },
    ]) {
      const { apiError, internal } = toApiError(thrown);
      expect(internal).toBe(true);
      expect(apiError.toBody()).toEqual({
        code: 500,
        error: 'internal_server_error',
        details: INTERNAL_DETAILS,
      });
    }
    expect(toApiError(fastifyError(503, 'FST_ERR_X')).apiError.toBody().code).toBe(503);
  });
});
