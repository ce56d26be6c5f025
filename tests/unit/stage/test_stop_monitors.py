"""Stopping the samplers (tasks/stage/monitors.py): all at once, every one waited for, problems in the monitors'
order whatever order the stops end in, a host that fails never keeping the others running."""

from __future__ import annotations

import threading
import time

from tasks.stage.config import Monitor
from tasks.stage.local import LocalTransport
from tasks.stage.monitors import STOPPING_AT_ONCE, StartedMonitor, stop_monitors

STOP_S = 0.3  # how long a sampler takes to end after its TERM, here


class Slow(LocalTransport):
    """Each stop takes STOP_S; records how many ran at once. `absent` and `failing` name odd monitors."""

    def __init__(self, name: str, absent=(), failing=()):
        super().__init__(name=name)
        self.absent, self.failing, self.stopped = set(absent), set(failing), []
        self.running = self.most = 0
        self.lock = threading.Lock()

    def stop_detached(self, name: str, workdir: str, grace_s: float = 5) -> str:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(STOP_S if name != "vmstat-0" else 2 * STOP_S)  # the first ends last
        with self.lock:
            self.running -= 1
            self.stopped.append(name)
        if name in self.failing:
            raise RuntimeError("connection lost")
        return "absent" if name in self.absent else "terminated"


def _started(host: str, count: int) -> list[StartedMonitor]:
    return [StartedMonitor(host, Monitor(kind="vmstat"), f"vmstat-{n}", f"/run/{host}/vmstat-{n}.log", "v.log")
            for n in range(count)]


def test_samplers_stop_together_and_every_one_is_waited_for():
    transports = {"app": Slow("app", absent={"vmstat-0"}), "db": Slow("db", failing={"vmstat-1"})}
    file = StartedMonitor("app", Monitor(kind="file", path="/a.log"), "", "/a.log", "a.log")  # nothing to stop
    started = _started("app", 4) + [file] + _started("db", 3)
    began = time.monotonic()
    problems = stop_monitors(started, transports)
    took = time.monotonic() - began
    assert problems == ["app: monitor vmstat-0 was no longer running when stopped",
                        "db: could not stop vmstat-1: connection lost"]
    assert sorted(transports["app"].stopped) == [f"vmstat-{n}" for n in range(4)]
    assert sorted(transports["db"].stopped) == [f"vmstat-{n}" for n in range(3)]
    assert took < 2 * STOP_S + 0.5, took  # one after another: 8 * STOP_S
    assert transports["app"].most + transports["db"].most > 2


def test_never_more_stops_at_once_than_a_connection_takes():
    transports = {"app": Slow("app")}
    assert stop_monitors(_started("app", STOPPING_AT_ONCE + 3), transports) == []
    assert transports["app"].most == STOPPING_AT_ONCE
    assert len(transports["app"].stopped) == STOPPING_AT_ONCE + 3
