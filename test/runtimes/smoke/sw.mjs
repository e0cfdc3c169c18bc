// worker.mjs as a service worker script (`addEventListener('fetch', …)`): the entry of the webpack bundle
// (`target: 'webworker'`) that scripts/test-runtimes.mjs runs in workerd.
import worker from './worker.mjs';

addEventListener('fetch', (event) => event.respondWith(worker.fetch(event.request)));
