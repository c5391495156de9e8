// The console's shell: sign-in, the pages by the address's #fragment, the live updates.
import { h, show, problem } from './dom.js';
import { isSignedIn, onSignedOut, resume, signIn, signOut } from './api.js';
import { overview } from './overview.js';
import { runDetail, runs } from './runs.js';
import { requestDetail, requests } from './requests.js';
import { tester } from './tester.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const live = document.getElementById('live');
const signOutButton = document.getElementById('sign-out');

/** The page shown now: a `refresh(stats)` it gives is called on each live update. */
let current = null;
let stream = null;

const PAGES = [
  [/^#\/overview$/, () => overview()],
  [/^#\/runs$/, () => runs()],
  [/^#\/runs\/(.+)$/, (id) => runDetail(decodeURIComponent(id))],
  [/^#\/requests$/, () => requests()],
  [/^#\/requests\/(.+)$/, (id) => requestDetail(decodeURIComponent(id))],
  [/^#\/tester$/, () => tester()],
];

function route() {
  if (!isSignedIn()) return signInPage();
  const hash = location.hash || '#/overview';
  const [, make] = PAGES.find(([re]) => re.test(hash)) ?? PAGES[0];
  const args = (PAGES.find(([re]) => re.test(hash))?.[0].exec(hash) ?? []).slice(1);
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('here', hash.startsWith(a.getAttribute('href')));
  current?.leave?.();
  current = make(...args);
  show(main, current.el);
}

function signInPage() {
  nav.hidden = true;
  signOutButton.hidden = true;
  live.hidden = true;
  stream?.close();
  stream = null;
  const input = h('input', {
    id: 'token',
    type: 'password',
    name: 'token',
    autocomplete: 'current-password',
    required: true,
    placeholder: 'gateway token',
  });
  const message = h('div', { id: 'sign-in-message' });
  const form = h(
    'form',
    {
      id: 'sign-in',
      class: 'card narrow',
      onsubmit: async (e) => {
        e.preventDefault();
        show(message);
        try {
          await signIn(input.value);
          input.value = '';
          start();
        } catch (err) {
          show(message, problem(err.status === 401 ? { message: 'That token is not the gateway token.' } : err));
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      { class: 'muted' },
      'The console signs in with the gateway token (gateway.auth.token). It is sent once and exchanged for a session cookie.',
    ),
    h('label', { for: 'token' }, 'Gateway token'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
    message,
  );
  current?.leave?.();
  current = null;
  show(main, form);
  input.focus();
}

/** Live updates: the overview's figures as they change; each page takes what it needs. */
function listen() {
  stream?.close();
  stream = new EventSource('/api/stream');
  stream.addEventListener('open', () => (live.hidden = false));
  stream.addEventListener('error', () => (live.hidden = true));
  stream.addEventListener('stats', (e) => {
    live.hidden = false;
    current?.refresh?.(JSON.parse(e.data));
  });
  stream.addEventListener('signed-out', () => {
    stream.close();
    location.reload();
  });
}

function start() {
  nav.hidden = false;
  signOutButton.hidden = false;
  listen();
  route();
}

onSignedOut(() => signInPage());
signOutButton.addEventListener('click', () => void signOut());
window.addEventListener('hashchange', () => route());
if (await resume()) start();
else signInPage();
