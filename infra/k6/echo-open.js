// Open-model load on the demo echo service: calls start at a fixed arrival rate, whether or not earlier
// ones have finished (k6 constant-arrival-rate, or ramping-arrival-rate with RAMP_TO_PER_S). When every VU
// is busy, k6 cannot start a call on time and counts it in `dropped_iterations`: the warehouse reads those
// points as calls offered but never made (iteration_summary.dropped).
//
// Environment (k6 -e KEY=VALUE; a campaign step's keys are passed upper-cased):
//   TARGETS       comma-separated base URLs, e.g. http://127.0.0.1:18081,http://127.0.0.1:18082
//   TARGET_NAMES  instance names in the same order (tag `server`); default app1, app2, ...
//   RATE_PER_S    calls started per second (the step's offered load; campaign key rate_per_s)
//   RAMP_TO_PER_S optional: ramp linearly from RATE_PER_S to this rate over DURATION instead
//   DURATION      k6 duration, e.g. 10s (default 10s)
//   MAX_VUS       most VUs k6 may use to keep the rate (default 50); PRE_ALLOCATED_VUS (default 5)
//   MESSAGE_SIZE  request body size in bytes (default 1024)
//   DELAY_MS      ask the service to hold each call this long (EchoService ?delay_ms=), default 0
import http from 'k6/http';

function list(value) {
  return (value || '').split(',').map((item) => item.trim()).filter((item) => item.length > 0);
}

function number(name, fallback) {
  const value = Number(__ENV[name] === undefined || __ENV[name] === '' ? fallback : __ENV[name]);
  if (!(value >= 0)) {
    throw new Error(`${name} must be a non-negative number, got ${__ENV[name]}`);
  }
  return value;
}

const targets = list(__ENV.TARGETS).map((url) => url.replace(/\/+$/, ''));
if (targets.length === 0) {
  throw new Error('TARGETS is empty: pass comma-separated base URLs, e.g. -e TARGETS=http://127.0.0.1:18081');
}
const givenNames = list(__ENV.TARGET_NAMES);
const names = givenNames.length > 0 ? givenNames : targets.map((_, i) => `app${i + 1}`);
const rate = number('RATE_PER_S', 10);
const duration = __ENV.DURATION || '10s';
const maxVUs = number('MAX_VUS', 50);
const preAllocatedVUs = Math.min(number('PRE_ALLOCATED_VUS', 5), maxVUs);
const body = 'x'.repeat(number('MESSAGE_SIZE', 1024));
const delay = number('DELAY_MS', 0);

const scenario = __ENV.RAMP_TO_PER_S
  ? {
      executor: 'ramping-arrival-rate', startRate: rate, timeUnit: '1s', preAllocatedVUs, maxVUs,
      stages: [{ target: number('RAMP_TO_PER_S', rate), duration }],
    }
  : { executor: 'constant-arrival-rate', rate, timeUnit: '1s', duration, preAllocatedVUs, maxVUs };

export const options = {
  scenarios: { open: scenario },
  discardResponseBodies: true,
};

let next = 0;

export default function () {
  const i = next++ % targets.length;
  const query = delay > 0 ? `?delay_ms=${delay}` : '';
  http.post(`${targets[i]}/echo${query}`, body, {
    headers: { 'Content-Type': 'application/octet-stream' },
    tags: { server: names[i], name: `${names[i]} POST /echo` },
  });
}
