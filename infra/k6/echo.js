// Closed-model load on the demo echo service: VUS virtual users POST MESSAGE_SIZE bytes in a loop.
//
// Environment (k6 -e KEY=VALUE or the process environment):
//   TARGETS       comma-separated base URLs, e.g. http://127.0.0.1:18081,http://127.0.0.1:18082
//   TARGET_NAMES  instance names in the same order (tag `server`); default app1, app2, ...
//   VUS           virtual users in all (default THREADS x NODES, else 1)
//   THREADS, NODES a step of `nodes` generators with `threads` each (campaign keys nodes, threads): k6 runs
//                 on `nodes` generators and splits THREADS x NODES VUs between them (execution segments)
//   DURATION      k6 duration, e.g. 10s (default 10s)
//   MESSAGE_SIZE  request body size in bytes (default 1024)
//   ENDPOINT      the path called (default /echo, POSTed); any other path is a GET (/health: a light
//                 background load whose calls a requirement scoped to `label: /echo` leaves out)
//   OPERATIONS    `named`: every iteration calls three named operations in turn instead (k6 tag `name`,
//                 each its own label for requirements and `compare`): read-small (POST /echo, 64 bytes),
//                 write-large (POST /echo, 16 KiB, held DELAY_MS by the service) and health (GET /health)
//   DELAY_MS      how long the service holds a write-large call (EchoService ?delay_ms=; default 0)
// No thresholds: requirements are judged from the logs after the run, not by k6.
import http from 'k6/http';

function list(value) {
  return (value || '').split(',').map((item) => item.trim()).filter((item) => item.length > 0);
}

const targets = list(__ENV.TARGETS).map((url) => url.replace(/\/+$/, ''));
if (targets.length === 0) {
  throw new Error('TARGETS is empty: pass comma-separated base URLs, e.g. -e TARGETS=http://127.0.0.1:18081');
}
const givenNames = list(__ENV.TARGET_NAMES);
if (givenNames.length > 0 && givenNames.length !== targets.length) {
  throw new Error(`TARGET_NAMES has ${givenNames.length} names for ${targets.length} TARGETS`);
}
const names = givenNames.length > 0 ? givenNames : targets.map((_, i) => `app${i + 1}`);
const size = parseInt(__ENV.MESSAGE_SIZE || '1024', 10);
if (!(size >= 0)) {
  throw new Error(`MESSAGE_SIZE must be a number of bytes, got ${__ENV.MESSAGE_SIZE}`);
}
const body = 'x'.repeat(size);
const endpoint = __ENV.ENDPOINT || '/echo';
const named = __ENV.OPERATIONS === 'named';
const delay = parseInt(__ENV.DELAY_MS || '0', 10);
if (!(delay >= 0)) {
  throw new Error(`DELAY_MS must be a number of milliseconds, got ${__ENV.DELAY_MS}`);
}
const octets = { 'Content-Type': 'application/octet-stream' };
const small = 'x'.repeat(64);
const large = 'x'.repeat(16 * 1024);

export const options = {
  vus: parseInt(__ENV.VUS || String(parseInt(__ENV.THREADS || '1', 10) * parseInt(__ENV.NODES || '1', 10)), 10),
  duration: __ENV.DURATION || '10s',
  discardResponseBodies: true,
  // The tags perfcampaign reads, and k6's error tags: `--out json` writes 13 points a request, each with every
  // tag, and leaving out url (a copy of name here), proto, group, scenario and tls_version makes its lines a
  // quarter shorter, its read a quarter faster (docs/performance.md, "The demo's road").
  systemTags: ['status', 'method', 'name', 'check', 'error', 'error_code', 'expected_response'],
};

export default function () {
  // Round-robin: each VU starts on a different target and moves to the next one every iteration.
  const i = (__VU - 1 + __ITER) % targets.length;
  if (named) {
    const server = names[i];
    const query = delay > 0 ? `?delay_ms=${delay}` : '';
    http.post(`${targets[i]}/echo`, small, { headers: octets, tags: { server, name: 'read-small' } });
    http.post(`${targets[i]}/echo${query}`, large, { headers: octets, tags: { server, name: 'write-large' } });
    http.get(`${targets[i]}/health`, { tags: { server, name: 'health' } });
  } else if (endpoint === '/echo') {
    http.post(`${targets[i]}/echo`, body, {
      headers: { 'Content-Type': 'application/octet-stream' },
      tags: { server: names[i] },
    });
  } else {
    http.get(`${targets[i]}${endpoint}`, { tags: { server: names[i] } });
  }
}
