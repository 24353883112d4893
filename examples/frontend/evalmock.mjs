// evalmock sessions for browser tests (Playwright, Cypress) and Node: create a world of your own,
// queue faults, read the journal and the client verdict, delete it. No dependency: the global
// fetch of Node 18+ or a browser. The admin API it calls: openapi/evalmock-admin.yaml.
//
//   import { createSession } from './evalmock.mjs';
//   const session = await createSession('http://127.0.0.1:8080', { cases: 3 });
//   await session.fault({ api: 'test-set', status: 503, retryAfter: 2 });
//   // ... the app under test, given session.baseUrl and session.token
//   await session.assertConforms();  // throws with the findings' words
//   await session.delete();

const ADMIN = '/__evalmock';
const MAX_ANSWER_CHARS = 16 * 1024 * 1024; // a journal is bounded by the mock; more is not the mock's

/** The admin API refused a request (its status, code, message and details), or did not answer. */
export class EvalmockError extends Error {
  constructor(message, { status = null, code = null, details = [] } = {}) {
    super(message);
    this.name = 'EvalmockError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

async function call(baseUrl, method, path, { body, query, adminToken, fetchImpl } = {}) {
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
  }
  const headers = {};
  if (adminToken) headers.Authorization = `Bearer ${adminToken}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await (fetchImpl ?? fetch)(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new EvalmockError(`${method} ${path}: the mock did not answer: ${error.message}`);
  }
  const text = await response.text();
  if (text.length > MAX_ANSWER_CHARS) {
    throw new EvalmockError(`${method} ${path}: the answer is over ${MAX_ANSWER_CHARS} characters`, {
      status: response.status,
    });
  }
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    if (response.ok) {
      throw new EvalmockError(`${method} ${path}: the answer is not JSON`, { status: response.status });
    }
  }
  if (!response.ok) {
    const error = parsed?.error ?? {};
    const code = typeof error.code === 'string' ? error.code : null;
    const message = typeof error.message === 'string' ? error.message : text.slice(0, 200);
    const details = Array.isArray(error.details) ? error.details : [];
    const said = details.map((detail) => `\n  ${JSON.stringify(detail)}`).join('');
    throw new EvalmockError(
      `${method} ${path}: ${response.status} ${code ?? ''} ${message}`.trimEnd() + said,
      { status: response.status, code, details },
    );
  }
  return parsed;
}

/** One finding as a line: its rule and level, what the app sent against what the page asks. */
export function findingWords(finding) {
  if (finding === null || typeof finding !== 'object') return String(finding);
  const head = [finding.rule, finding.level && `[${finding.level}]`].filter(Boolean).join(' ');
  const said =
    finding.message ??
    finding.why ??
    ['expected', 'received'].filter((key) => finding[key]).map((key) => `${key} ${finding[key]}`).join('; ');
  const source = finding.source ? `(source: ${finding.source})` : '';
  const words = [head && said ? `${head}:` : head, said, source].filter(Boolean).join(' ');
  return words || JSON.stringify(finding);
}

// query: 'NAME=VALUE', or 'NAME' for any value, or one {NAME: VALUE} as a fault's match.query
function journalQuery({ api, method, path, query, limit } = {}) {
  if (query !== null && typeof query === 'object') {
    const entries = Object.entries(query);
    if (entries.length !== 1) {
      throw new TypeError(
        `query filters by one parameter ('NAME=VALUE', 'NAME' or {NAME: VALUE}); received ${entries.length} entries`,
      );
    }
    const [[name, value]] = entries;
    query = `${name}=${value}`;
  }
  return { api, method, path, query, limit };
}

/** One session of a mock: its world answers requests that carry `token`. */
export class Session {
  #token;
  #options;

  constructor(baseUrl, id, token, options = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.id = id;
    this.#token = token; // a credential: kept out of JSON.stringify and console.log of the session
    this.#options = options;
  }

  /** The bearer token the app under test sends. */
  get token() {
    return this.#token;
  }

  /** What a request to the session's world carries. */
  get headers() {
    return { Authorization: `Bearer ${this.#token}` };
  }

  toJSON() {
    return { id: this.id, baseUrl: this.baseUrl };
  }

  #call(method, tail, extra = {}) {
    const path = `${ADMIN}/sessions/${encodeURIComponent(this.id)}${tail}`;
    return call(this.baseUrl, method, path, { ...this.#options, ...extra });
  }

  /** The session as the mock describes it (its world, counts, times; never the token). */
  info() {
    return this.#call('GET', '');
  }

  /**
   * Queue an answer for the next `times` requests of `api` ('test-set' or 'gradient'): a documented
   * `status` (with `code`, `retryAfter` whole seconds), or `latencyMs`; only those matching `match`
   * ({query: {NAME: VALUE or '*'}, page: 2}). The queue is used up in order.
   */
  fault({ api = 'test-set', times = 1, ...rest } = {}) {
    return this.#call('POST', '/faults', { body: { api, times, ...rest } });
  }

  /** The faults still queued, in order. */
  async faults() {
    const answer = await this.#call('GET', '/faults');
    return Array.isArray(answer) ? answer : answer.faults;
  }

  async clearFaults() {
    await this.#call('DELETE', '/faults');
  }

  /** The journal, newest last: {api, method, path, query: 'NAME=VALUE', 'NAME' or {NAME: VALUE}, limit} filter it. */
  async requests(filters = {}) {
    const answer = await this.#call('GET', '/requests', { query: journalQuery(filters) });
    return answer.requests;
  }

  /** How many journaled requests match the filters. */
  async count(filters = {}) {
    const answer = await this.#call('GET', '/requests/count', { query: journalQuery(filters) });
    return answer.count;
  }

  async clearRequests() {
    await this.#call('DELETE', '/requests');
  }

  /** {verdict: 'CONFORMS' | 'VIOLATIONS' | 'INCOMPLETE', findings, notJudged, judged}. */
  verdict() {
    return this.#call('GET', '/verdict');
  }

  /** Throws an Error with every finding's words unless the app used the APIs as the pages ask. */
  async assertConforms() {
    const verdict = await this.verdict();
    if (verdict.verdict !== 'CONFORMS') {
      const lines = [
        ...verdict.findings.map((finding) => `  - ${findingWords(finding)}`),
        ...(verdict.notes ?? []).map((note) => `  note: ${note}`),
        // INCOMPLETE: what was not judged is the story
        ...(verdict.findings.length ? [] : verdict.notJudged.map((item) => `  not judged: ${findingWords(item)}`)),
      ];
      throw new Error(
        [`client verdict: ${verdict.verdict} (${verdict.judged} requests judged)`, ...lines].join('\n'),
      );
    }
    return verdict;
  }

  /** End the session: its token gets 401 from now on. A session already gone is no error. */
  async delete() {
    try {
      await this.#call('DELETE', '');
    } catch (error) {
      if (!(error instanceof EvalmockError && error.status === 404)) throw error;
    }
  }
}

/**
 * A new session of the mock at `baseUrl`: `world` is {seed, cases, data, dataOnly, churn}, all
 * optional (none: the default world). `options.adminToken` where the mock asks for one;
 * `options.fetchImpl` instead of the global fetch.
 */
export async function createSession(baseUrl, world = {}, options = {}) {
  const answer = await call(baseUrl, 'POST', `${ADMIN}/sessions`, { ...options, body: world });
  return new Session(baseUrl, answer.id, answer.token, options);
}
