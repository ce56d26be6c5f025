"""The base of every model read from a person's file (campaigns, manifests): an unknown key is an error."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # campaigns, stages, background processes


class StrictModel(BaseModel):
    """A model that refuses keys it does not declare (a misspelt key must not be ignored silently)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # a NaN threshold or duration compares false
