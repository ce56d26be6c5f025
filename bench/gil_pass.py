"""The fingerprint pass over a gzip file, alone and beside a thread that runs Python code (as the demo's warm-up
imports Great Expectations and matplotlib while the ingest reads k6's JSON), at the warm-up's switch interval.

Each zlib, sha256 or numpy call of the pass lets the GIL go, and gets it back only when the other thread gives
it up, up to a switch interval later: the number of calls, not their work, sets the pass's time beside such a
thread. Prints wall and CPU seconds of the pass (`tasks.bundle.files.fingerprint`) and, for comparison, of
unpacking the same file with `gzip.open` in 1 MiB reads (a zlib call per 8 KiB of packed bytes on Python 3.11).

    .venv/bin/python bench/gil_pass.py [--mb 500]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.campaign import WARM_UP_SWITCH_S  # noqa: E402
from tasks.bundle.files import fingerprint  # noqa: E402

SAMPLE = ROOT / "tests/data/samples/bundle-echo/loadgen/k6-iter3.json.gz"


def write_k6_json(path: Path, megabytes: int) -> None:
    """The echo sample's real k6 lines repeated to about `megabytes` of text, gzipped."""
    text = gzip.decompress(SAMPLE.read_bytes())
    with gzip.open(path, "wb", compresslevel=6) as handle:
        for _ in range(max(1, (megabytes << 20) // len(text))):
            handle.write(text)


def gzip_open_read(path: Path) -> None:
    with gzip.open(path, "rb") as handle:
        while handle.read(1 << 20):
            pass


def timed(work, beside_python: bool) -> tuple[float, float]:
    """Wall and CPU (this thread's) seconds of work(), with or without a thread running Python code beside it."""
    done = threading.Event()

    def python_code() -> None:
        while not done.is_set():
            sum(range(1000))

    other = threading.Thread(target=python_code, daemon=True)
    if beside_python:
        other.start()
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        work()
        return time.perf_counter() - wall, time.thread_time() - cpu
    finally:
        done.set()
        if beside_python:
            other.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=500, help="unpacked size of the k6 JSON file (MB)")
    args = parser.parse_args()
    sys.setswitchinterval(WARM_UP_SWITCH_S)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "k6.json.gz"
        write_k6_json(path, args.mb)
        print(f"{path.stat().st_size / 1e6:.1f} MB gzip, {args.mb} MB unpacked; switch interval "
              f"{WARM_UP_SWITCH_S * 1000:g} ms; wall / CPU seconds")
        for name, work in (("fingerprint pass", lambda: fingerprint(path, marker=b'"type":"Metric"')),
                           ("gzip.open, 1 MiB reads", lambda: gzip_open_read(path))):
            for beside in (False, True):
                wall, cpu = timed(work, beside)
                print(f"{name:24} {'beside Python code' if beside else 'alone':20} {wall:6.2f} / {cpu:5.2f}")


if __name__ == "__main__":
    main()
