"""perfcampaign's code, one package per stretch of the road (see docs/architecture.md); settings.py holds the shared defaults.
May import: -"""
