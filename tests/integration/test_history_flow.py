"""The ingest flow re-analyses the campaign's history: a new regression (one event, however many series moved)
becomes a table artifact row and a `perfcampaign.regression` event in the Prefect API (real test-harness server)."""

from __future__ import annotations

import json
import time

import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.history_nights import Night, write_night

pytestmark = pytest.mark.integration
SHIFT = 5


def test_a_new_regression_is_an_artifact_and_an_event(prefect_server, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.events.filters import EventFilter, EventNameFilter

    from flows.ingest import ingest_flow

    warehouse = tmp_path / "w.duckdb"
    slower = Night(latency={"server": 1.25, "client": 1.0}, version="2.0.0")
    for n in range(SHIFT + 2):
        ingest_bundle(write_night(tmp_path, n, slower if n >= SHIFT else Night()), warehouse, progress=lambda m: None)
    last = write_night(tmp_path, SHIFT + 2, slower)
    assert ingest_flow(str(last), str(warehouse)) == f"nightly-{SHIFT + 2:03d}"
    with get_client(sync_client=True) as client:
        (artifact,) = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["regressions-nightly"])))
        rows = artifact.data if isinstance(artifact.data, list) else json.loads(artifact.data)
        # one shift of the server side: one event, however many series (hosts, iterations, percentiles) it moved
        assert len(rows) == 1 and rows[0]["sides"] == "server" and rows[0]["series"] > 10
        assert rows[0]["run_id"] == f"nightly-{SHIFT:03d}"
        assert rows[0]["label_changes"] == "sut_version 1.0.0 → 2.0.0"
        wanted = EventFilter(event=EventNameFilter(name=["perfcampaign.regression"]))
        for _ in range(60):  # the server persists events a moment after they are sent
            page = client.read_events(wanted, limit=50)
            if page.total >= 1:
                break
            time.sleep(0.5)
        events = list(page.events)
    (event,) = events
    assert event.resource.id == f"perfcampaign.event.{rows[0]['event_id']}"
    assert event.payload["event_id"] == rows[0]["event_id"]
    assert event.payload["change_pct"] == pytest.approx(rows[0]["change_pct"])
    assert len(event.payload["series_keys"]) == rows[0]["series"]
    assert "server (all) it 3 (all) p95_ms" in event.payload["series_keys"]
