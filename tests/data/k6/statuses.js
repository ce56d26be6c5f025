// A tiny k6 script for tests: four kinds of outcome against a local server (BASE=http://127.0.0.1:PORT).
// The response callback accepts 404, so k6's own failure flag differs from a plain "status >= 400" rule.
import http from 'k6/http';

export const options = { vus: 2, duration: '2s' };

http.setResponseCallback(http.expectedStatuses(200, 404));

export default function () {
  http.get(`${__ENV.BASE}/ok`);
  http.get(`${__ENV.BASE}/missing?id=${__ITER}`, { tags: { name: 'missing' } });
  http.post(`${__ENV.BASE}/boom`, 'x');
  if (__ITER % 10 === 0) {
    http.get('http://127.0.0.1:1/refused', { timeout: '1s' }); // nothing listens on port 1: status 0
  }
}

export function handleSummary(data) {
  return { 'handle-summary.json': JSON.stringify(data) };
}
