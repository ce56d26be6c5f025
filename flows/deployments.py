"""Deployments: one scheduled deployment per campaign file (nightly by default) and an ad-hoc one for the UI."""

from __future__ import annotations

from pathlib import Path

from prefect import serve
from prefect.client.schemas.schedules import CronSchedule

from flows.campaign import campaign_flow
from tasks.campaign.spec import load_campaign
from tasks.settings import REPO

ADHOC = "adhoc"


def campaign_files(paths: list[Path] | None = None) -> list[Path]:
    """The given campaign files, else every `campaigns/*.yaml` of the repository."""
    return [Path(p).resolve() for p in paths] if paths else sorted((REPO / "campaigns").glob("*.yaml"))


def build_deployments(paths: list[Path] | None = None) -> list:
    """RunnerDeployments: `campaign/<name>` on the campaign's cron, and `campaign/adhoc` with no schedule."""
    deployments = []
    for path in campaign_files(paths):
        campaign = load_campaign(path)  # validated now: a broken file fails at serve time, not at 2 a.m.
        schedule = campaign.schedule
        deployments.append(
            campaign_flow.to_deployment(
                name=campaign.campaign,
                parameters={"campaign_file": str(path)},
                schedules=[CronSchedule(cron=schedule.cron, timezone=schedule.timezone)] if schedule.active else [],
                description=f"{campaign.campaign} / {campaign.scenario} on stage {campaign.stage}",
                tags=["campaign", campaign.stage],
            )
        )
    deployments.append(
        campaign_flow.to_deployment(
            name=ADHOC,
            parameters={"campaign_file": str(REPO / "campaigns" / "demo.yaml")},
            description="Run any campaign file now; the overrides form changes duration, pause, steps, the ramp or declared vars.",
            tags=["campaign", "adhoc"],
        )
    )
    return deployments


def serve_campaigns(paths: list[Path] | None = None) -> None:
    """Serve every deployment from this process until interrupted (no work pool needed)."""
    serve(*build_deployments(paths))
