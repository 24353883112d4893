// The list of an agent's test-set cases, as a frontend would write it against the page's API:
// "Load more" passes each page's nextCursor back as it came, with the same filters; a 503 says the
// service is busy and the app waits Retry-After seconds before it tries again; a refused cursor
// starts the list again; no case at all is an empty state, not an empty list.

// Its settings come in the URL's fragment, which no server sees: #base=URL&token=T&agent=A&project=P&limit=N
const settings = new URLSearchParams(location.hash.slice(1));
const base = (settings.get('base') ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const token = settings.get('token') ?? 'demo-user';
const agent = settings.get('agent') ?? 'example';
const project = settings.get('project') ?? '2489E9AD-2EE2-8E00-8EC9-32D5F69181C0';
const limit = settings.get('limit') ?? '25';

const list = document.getElementById('cases');
const empty = document.getElementById('empty');
const status = document.getElementById('status');
const more = document.getElementById('more');
document.getElementById('agent').textContent = agent;

let nextCursor = null;

function pageUrl(cursor) {
  const url = new URL(`${base}/v1/agents/${encodeURIComponent(agent)}/test-set/cases`);
  url.searchParams.set('projectId', project);
  url.searchParams.set('limit', limit);
  if (cursor) url.searchParams.set('cursor', cursor); // as it came: opaque to the app
  return url;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function say(text, kind = '') {
  status.textContent = text;
  status.className = kind;
}

// Retry-After is whole seconds; without one, a second.
function retryAfterSeconds(response) {
  const seconds = Number.parseInt(response.headers.get('Retry-After') ?? '', 10);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : 1;
}

async function fetchPage(cursor) {
  for (;;) {
    const response = await fetch(pageUrl(cursor), { headers: { Authorization: `Bearer ${token}` } });
    if (response.status === 503) {
      const seconds = retryAfterSeconds(response);
      say(`The service is busy; trying again in ${seconds} s.`);
      await sleep(seconds * 1000); // WAIT: the page's Retry-After
      continue;
    }
    return response;
  }
}

function show(cases) {
  for (const testCase of cases) {
    const item = document.createElement('li');
    item.dataset.id = testCase.id;
    item.textContent = testCase.id;
    const kind = document.createElement('span');
    kind.className = 'kind';
    kind.textContent = testCase.kind + (testCase.retired ? ', retired' : '');
    item.append(kind);
    list.append(item);
  }
}

async function load(cursor) {
  more.disabled = true;
  say('Loading…');
  const response = await fetchPage(cursor);
  if (response.status === 400 && cursor) {
    // "otherwise 400 bad-input, and the list starts again without it"
    list.replaceChildren();
    nextCursor = null;
    return load(null);
  }
  if (response.status === 401) {
    more.hidden = true;
    return say('Your sign-in has expired. Sign in again to see the cases.', 'error');
  }
  if (!response.ok) {
    more.disabled = false;
    return say(`Could not load the cases (${response.status}).`, 'error');
  }
  const page = await response.json();
  show(page.data);
  empty.hidden = list.children.length > 0;
  nextCursor = page.hasMore ? page.nextCursor : null;
  more.hidden = !nextCursor;
  more.disabled = false;
  const count = list.children.length;
  say(count ? `${count} case${count === 1 ? '' : 's'}` : ''); // the empty state says it
}

more.addEventListener('click', () => load(nextCursor));
load(null);
