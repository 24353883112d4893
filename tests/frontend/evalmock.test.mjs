// examples/frontend/evalmock.mjs against a real mock (EVALMOCK_MOCK_URL), with Node's own test
// runner: run by tests/frontend/test_js_module.py, which starts the mock.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { EvalmockError, createSession } from '../../examples/frontend/evalmock.mjs';

const BASE = process.env.EVALMOCK_MOCK_URL;
const AGENT = 'shop.checkout';
const PROJECT = '0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b';

// A data-only world of one list, these cases newest first, in the short form (the rest is filled in).
function worldOf(...ids) {
  const cases = ids.map((id) => ({ id }));
  return { data: { testSet: [{ agentId: AGENT, projectId: PROJECT, cases }] }, dataOnly: true };
}

function cases(session, params = {}) {
  const url = new URL(`${session.baseUrl}/v1/agents/${AGENT}/test-set/cases`);
  for (const [name, value] of Object.entries({ projectId: PROJECT, limit: '2', ...params })) {
    url.searchParams.set(name, value);
  }
  return fetch(url, { headers: session.headers });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('two sessions serve their own data under the same agent and project', async () => {
  const first = await createSession(BASE, worldOf('case-one-b', 'case-one-a'));
  const second = await createSession(BASE, worldOf('case-two'));
  try {
    const ids = async (session) => (await (await cases(session)).json()).data.map((c) => c.id);
    assert.deepEqual(await ids(first), ['case-one-b', 'case-one-a']);
    assert.deepEqual(await ids(second), ['case-two']);
  } finally {
    await first.delete();
    await second.delete();
  }
});

test('a fault answers the next request, and the journal and its count say what was sent', async () => {
  const session = await createSession(BASE, worldOf('case-a', 'case-b', 'case-c'));
  try {
    const fault = await session.fault({ api: 'test-set', status: 503, retryAfter: 3 });
    assert.deepEqual((await session.faults()).map((f) => f.id), [fault.id]);
    const busy = await cases(session);
    assert.equal(busy.status, 503);
    assert.equal(busy.headers.get('Retry-After'), '3');
    const first = await (await cases(session)).json();
    await cases(session, { cursor: first.nextCursor });
    assert.deepEqual(await session.faults(), []);
    const journal = await session.requests({ api: 'test-set' });
    assert.deepEqual(journal.map((entry) => entry.status), [503, 200, 200]);
    assert.equal(journal[0].shapedBy, `fault:${fault.id}`);
    assert.equal(await session.count({ query: 'cursor' }), 1);
    assert.equal(await session.count({ query: `cursor=${first.nextCursor}` }), 1);
    // a fault's match.query form filters the same, never as '[object Object]'
    assert.equal(await session.count({ query: { cursor: '*' } }), 1);
    assert.equal((await session.requests({ query: { cursor: first.nextCursor } })).length, 1);
    await assert.rejects(session.count({ query: { cursor: '*', limit: '2' } }), TypeError);
    await session.clearRequests();
    assert.equal(await session.count(), 0);
  } finally {
    await session.delete();
  }
});

test('the verdict of an app that waits Retry-After is CONFORMS', async () => {
  const session = await createSession(BASE, worldOf('case-a'));
  try {
    await session.fault({ api: 'test-set', status: 503, retryAfter: 1 });
    assert.equal((await cases(session)).status, 503);
    await sleep(1100);
    assert.equal((await cases(session)).status, 200);
    const verdict = await session.assertConforms();
    assert.equal(verdict.verdict, 'CONFORMS');
  } finally {
    await session.delete();
  }
});

test('assertConforms throws with the findings of an app that retries at once', async () => {
  const session = await createSession(BASE, worldOf('case-a'));
  try {
    await session.fault({ api: 'test-set', status: 503, retryAfter: 2 });
    await cases(session);
    await cases(session);
    assert.equal((await session.verdict()).verdict, 'VIOLATIONS');
    await assert.rejects(session.assertConforms(), /client_waits_retry_after \[page\]/);
  } finally {
    await session.delete();
  }
});

test('a deleted session: its token gets 401, its id 404 in the admin API words', async () => {
  const session = await createSession(BASE);
  await session.delete();
  await session.delete(); // already gone: no error
  assert.equal((await cases(session)).status, 401);
  await assert.rejects(session.info(), (error) => {
    assert.ok(error instanceof EvalmockError);
    assert.equal(error.status, 404);
    assert.equal(error.code, 'session-not-found');
    return true;
  });
});

test('a refused body names each mistake by its JSON path', async () => {
  await assert.rejects(createSession(BASE, { cases: 'many' }), (error) => {
    assert.equal(error.status, 400);
    assert.equal(error.code, 'bad-input');
    assert.ok(error.details.some((detail) => detail.path === '$.cases'), JSON.stringify(error.details));
    return true;
  });
});

test('a session serialised or logged shows no token', async () => {
  const session = await createSession(BASE);
  try {
    assert.ok(session.token.length > 0);
    assert.ok(!JSON.stringify(session).includes(session.token));
    assert.ok(!JSON.stringify(Object.entries(session)).includes(session.token));
  } finally {
    await session.delete();
  }
});
