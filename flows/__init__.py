"""Prefect flows: each reads top to bottom as the road, calling the Prefect tasks of the packages in order.
May import: every package of tasks but cli."""
