// Named operations on the demo echo service, closed model: each of VUS virtual users calls every operation
// in turn, so each operation is its own label (k6 tag `name`) that requirements and `compare` tell apart.
//
//   read-small   POST /echo with 64 bytes
//   write-large  POST /echo with 16 KiB, held DELAY_MS by the service (EchoService ?delay_ms=)
//   health       GET /health
//
// Environment (k6 -e KEY=VALUE; a campaign step's keys are passed upper-cased):
//   TARGETS       comma-separated base URLs, e.g. http://127.0.0.1:18081,http://127.0.0.1:18082
//   TARGET_NAMES  instance names in the same order (tag `server`); default app1, app2, ...
//   VUS           virtual users (default 1); DURATION k6 duration (default 10s)
//   DELAY_MS      how long the service holds each write-large call (default 0): the "after" of a
//                 before/after comparison changes it to stand for a slower build
import http from 'k6/http';

function list(value) {
  return (value || '').split(',').map((item) => item.trim()).filter((item) => item.length > 0);
}

const targets = list(__ENV.TARGETS).map((url) => url.replace(/\/+$/, ''));
if (targets.length === 0) {
  throw new Error('TARGETS is empty: pass comma-separated base URLs, e.g. -e TARGETS=http://127.0.0.1:18081');
}
const givenNames = list(__ENV.TARGET_NAMES);
const names = givenNames.length > 0 ? givenNames : targets.map((_, i) => `app${i + 1}`);
const delay = parseInt(__ENV.DELAY_MS || '0', 10);
if (!(delay >= 0)) {
  throw new Error(`DELAY_MS must be a non-negative number of milliseconds, got ${__ENV.DELAY_MS}`);
}
const small = 'x'.repeat(64);
const large = 'x'.repeat(16 * 1024);
const octets = { 'Content-Type': 'application/octet-stream' };

export const options = {
  vus: parseInt(__ENV.VUS || '1', 10),
  duration: __ENV.DURATION || '10s',
  discardResponseBodies: true,
};

export default function () {
  const i = (__VU - 1 + __ITER) % targets.length;
  const server = names[i];
  http.post(`${targets[i]}/echo`, small, { headers: octets, tags: { server, name: 'read-small' } });
  const query = delay > 0 ? `?delay_ms=${delay}` : '';
  http.post(`${targets[i]}/echo${query}`, large, { headers: octets, tags: { server, name: 'write-large' } });
  http.get(`${targets[i]}/health`, { tags: { server, name: 'health' } });
}
