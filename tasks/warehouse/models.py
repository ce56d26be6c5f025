"""Find and read the SQL models in `sql/`: one file per model, never SQL in Python strings."""

from __future__ import annotations

from functools import cache

from tasks.settings import SQL_DIR


@cache
def model_sql(name: str) -> str:
    """The text of `sql/<layer>/<name>.sql`, e.g. `model_sql("marts/iteration_stats")`."""
    path = SQL_DIR / f"{name}.sql"
    if not path.is_file():
        raise FileNotFoundError(f"no SQL model {name!r} (looked for {path})")
    return path.read_text(encoding="utf-8")


def models_in(layer: str) -> list[str]:
    """Model names of one layer (`schema`, `staging`, `intermediate`, `marts`), in file-name order."""
    return [f"{layer}/{path.stem}" for path in sorted((SQL_DIR / layer).glob("*.sql"))]
