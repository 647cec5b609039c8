import { GymError } from '../errors.ts';

/** What a check of the model endpoint found: it answers; `warning` when it does not list the model. */
export interface EndpointCheck {
  baseURL: string;
  /** Which request showed the endpoint is up. */
  via: 'models' | 'chat';
  /** The models the endpoint lists (GET /models), when it lists them. */
  models?: string[];
  warning?: string;
}

export interface EndpointCheckOptions {
  /** Default 10 s per request. */
  timeoutMs?: number;
  /** Says which flag or variable to fix in messages (default: the CLI's). */
  configHint?: { baseURL: string; apiKey: string };
}

const CLI_HINT = { baseURL: '--base-url URL (or $OPENAI_BASE_URL)', apiKey: '$OPENAI_API_KEY or $BENCHGYM_API_KEY' };

/** The base URL a run calls: the one given, else $OPENAI_BASE_URL; never a silent public default. */
export function configuredBaseURL(given: string | null | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return given || env.OPENAI_BASE_URL || undefined;
}

/**
 * Checks once, before any episode, that an OpenAI-compatible endpoint answers at `baseURL`:
 * GET /models, else (an endpoint without that route) a one-token chat completion. Throws
 * MODEL_UNAVAILABLE naming the URL when nothing answers there, the answer is not an
 * OpenAI-compatible API, or the key is missing or refused.
 *
 * @example
 * await checkModelEndpoint({ baseURL: 'http://127.0.0.1:8000/v1', model: 'qwen' });
 */
export async function checkModelEndpoint(
  config: { baseURL?: string; apiKey?: string; model: string },
  opts: EndpointCheckOptions = {},
): Promise<EndpointCheck> {
  const hint = opts.configHint ?? CLI_HINT;
  if (!config.baseURL) {
    throw new GymError(
      'MODEL_UNAVAILABLE',
      `no model endpoint is configured: pass ${hint.baseURL}, an OpenAI-compatible endpoint ` +
        `such as http://127.0.0.1:8000/v1 (for OpenAI itself: https://api.openai.com/v1 ` +
        `with ${hint.apiKey}); benchgym never falls back to a public endpoint`,
    );
  }
  let url: URL;
  try {
    url = new URL(config.baseURL);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new GymError('MODEL_UNAVAILABLE', `the model endpoint '${config.baseURL}' is not an http(s) URL (${hint.baseURL})`);
  }
  const base = config.baseURL.replace(/\/+$/, '');
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
  };
  const call = async (method: 'GET' | 'POST', route: string, body?: unknown): Promise<{ status: number; json: unknown; text: string }> => {
    try {
      const res = await fetch(`${base}${route}`, {
        method,
        headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'follow',
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, json, text };
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why =
        (err as Error).name === 'TimeoutError'
          ? `no answer within ${timeoutMs / 1000} s`
          : (cause?.code ?? cause?.message ?? (err as Error).message);
      throw new GymError(
        'MODEL_UNAVAILABLE',
        `the model endpoint ${base} is not reachable (${method} ${base}${route}: ${why}); start it, or fix ${hint.baseURL}`,
      );
    }
  };
  const refused = (status: number, route: string) =>
    new GymError(
      'MODEL_UNAVAILABLE',
      config.apiKey
        ? `the model endpoint ${base} refused the API key (${route}: HTTP ${status}); check ${hint.apiKey}`
        : `the model endpoint ${base} asks for an API key (${route}: HTTP ${status}) and none is configured: set ${hint.apiKey}`,
    );
  const errorText = (r: { json: unknown; text: string }) =>
    ((r.json as { error?: { message?: string } } | undefined)?.error?.message ?? r.text).replace(/\s+/g, ' ').slice(0, 200);

  const listed = await call('GET', '/models');
  if (listed.status === 401 || listed.status === 403) throw refused(listed.status, 'GET /models');
  if (listed.status >= 500)
    throw new GymError(
      'MODEL_UNAVAILABLE',
      `the model endpoint ${base} is failing (GET ${base}/models: HTTP ${listed.status}: ${errorText(listed)})`,
    );
  if (listed.status >= 200 && listed.status < 300) {
    const data = (listed.json as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(data))
      throw new GymError(
        'MODEL_UNAVAILABLE',
        `${base} answered GET /models with something other than an OpenAI ` +
          `model list; is ${hint.baseURL} the API's base (often ending in /v1)?`,
      );
    const models = data.map((m) => (m as { id?: unknown })?.id).filter((id): id is string => typeof id === 'string');
    const warning =
      models.length && !models.includes(config.model)
        ? `the endpoint ${base} does not list the model '${config.model}' (it ` +
          `lists ${models.slice(0, 10).join(', ')}${models.length > 10 ? ', ...' : ''}); calls may fail`
        : undefined;
    return { baseURL: base, via: 'models', models, ...(warning ? { warning } : {}) };
  }
  // No model list here (some servers lack the route): one tiny completion tells instead.
  const chat = await call('POST', '/chat/completions', {
    model: config.model,
    messages: [{ role: 'user', content: 'Reply with OK.' }],
    max_tokens: 1,
  });
  if (chat.status === 401 || chat.status === 403) throw refused(chat.status, 'POST /chat/completions');
  if (chat.status === 404 || chat.status === 405) {
    throw new GymError(
      'MODEL_UNAVAILABLE',
      `no OpenAI-compatible API at ${base}: GET /models answered HTTP ${listed.status} and POST /chat/completions ` +
        `HTTP ${chat.status} (${errorText(chat)}); is ${hint.baseURL} the API's base (often ending in /v1)?`,
    );
  }
  if (chat.status >= 500)
    throw new GymError(
      'MODEL_UNAVAILABLE',
      `the model endpoint ${base} is failing (POST ${base}/chat/completions: HTTP ${chat.status}: ${errorText(chat)})`,
    );
  if (chat.status >= 200 && chat.status < 300) return { baseURL: base, via: 'chat' };
  // 400, 422, 429: something answered that speaks the API; the run's own calls will tell more.
  return {
    baseURL: base,
    via: 'chat',
    warning: `the endpoint ${base} answered a one-token test completion with HTTP ${chat.status} (${errorText(chat)})`,
  };
}
