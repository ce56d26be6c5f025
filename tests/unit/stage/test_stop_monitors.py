"""Stopping the samplers (tasks/stage/monitors.py): all at once, every one waited for, problems in the monitors'
order whatever order the stops end in, a host that fails never keeping the others running."""

from __future__ import annotations

import threading
import time

from tasks.stage.config import Monitor
from tasks.stage.local import LocalTransport
from tasks.stage.monitors import STOPPING_AT_ONCE, StartedMonitor, stop_monitors

STOP_S = 0.05  # how long a sampler takes to end after its TERM, here (the first one: twice that, so it ends last)


class Slow(LocalTransport):
    """Each stop waits at `together` (the first `together.parties` stops of this host: a stop that waits there
    alone, as stops one after another would, breaks it after 30 s and fails), then takes STOP_S; records how many
    ran at once. `absent` and `failing` name odd monitors."""

    def __init__(self, name: str, together: threading.Barrier, absent=(), failing=()):
        super().__init__(name=name)
        self.together, self.absent, self.failing, self.stopped = together, set(absent), set(failing), []
        self.running = self.most = self.arrived = 0
        self.lock = threading.Lock()

    def stop_detached(self, name: str, workdir: str, grace_s: float = 5) -> str:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.arrived += 1
            waits = self.arrived <= self.together.parties
        if waits:
            self.together.wait(timeout=30)
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
    together = threading.Barrier(7)  # the 7 samplers of both hosts, all stopping at once
    transports = {"app": Slow("app", together, absent={"vmstat-0"}), "db": Slow("db", together, failing={"vmstat-1"})}
    file = StartedMonitor("app", Monitor(kind="file", path="/a.log"), "", "/a.log", "a.log")  # nothing to stop
    started = _started("app", 4) + [file] + _started("db", 3)
    problems = stop_monitors(started, transports)
    assert problems == ["app: monitor vmstat-0 was no longer running when stopped",
                        "db: could not stop vmstat-1: connection lost"]
    assert sorted(transports["app"].stopped) == [f"vmstat-{n}" for n in range(4)]
    assert sorted(transports["db"].stopped) == [f"vmstat-{n}" for n in range(3)]
    assert (transports["app"].most, transports["db"].most) == (4, 3)


def test_never_more_stops_at_once_than_a_connection_takes():
    # the first STOPPING_AT_ONCE stops wait for one another: all of them run before any ends, and a pool that let
    # more run would start the others meanwhile
    transports = {"app": Slow("app", threading.Barrier(STOPPING_AT_ONCE))}
    assert stop_monitors(_started("app", STOPPING_AT_ONCE + 3), transports) == []
    assert transports["app"].most == STOPPING_AT_ONCE
    assert len(transports["app"].stopped) == STOPPING_AT_ONCE + 3
