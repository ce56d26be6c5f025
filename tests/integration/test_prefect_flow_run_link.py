"""The campaign's record of the Prefect flow run it runs in (tasks/campaign/steps.py prefect_flow_run), made
inside a real flow run of the session's Prefect server: its id, and its page in the UI under the API's address."""

from __future__ import annotations

import pytest

from tasks.campaign.steps import prefect_flow_run

pytestmark = pytest.mark.integration


def test_a_flow_run_records_its_id_and_its_page(prefect_server):
    from prefect import flow
    from prefect.context import FlowRunContext
    from prefect.settings import PREFECT_API_URL

    @flow(name="flow-run-link")
    def linked():
        return prefect_flow_run(), str(FlowRunContext.get().flow_run.id)

    record, flow_run_id = linked()
    api = PREFECT_API_URL.value()
    assert api.startswith("http://127.0.0.1:") and api.endswith("/api")
    assert record.flow_run_id == flow_run_id
    assert record.flow_run_url == f"{api.removesuffix('/api')}/flow-runs/flow-run/{flow_run_id}"


def test_outside_a_flow_run_there_is_none(prefect_server):
    assert prefect_flow_run() is None
