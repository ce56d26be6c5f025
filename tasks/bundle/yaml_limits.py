"""YAML read with limits: a manifest or campaign file is small, and its anchors may not expand past a budget.

PyYAML shares an alias's object, so nested anchors (a "billion laughs" file of 680 bytes) load quickly and
explode later, when the labels are stored or the manifest is dumped. The node graph is walked before it
is constructed, counting every node as often as aliases repeat it, and refused past MAX_YAML_NODES.
Both limits can be set from the environment (docs/security.md).
"""

from __future__ import annotations

import os
from typing import Any

import yaml

MAX_YAML_BYTES = int(os.environ.get("PERFCAMPAIGN_MAX_YAML_BYTES", 8 << 20))
MAX_YAML_NODES = int(os.environ.get("PERFCAMPAIGN_MAX_YAML_NODES", 200_000))


class YamlLimitError(yaml.YAMLError):
    """A YAML text past a limit; the callers report it as invalid YAML, naming their file."""


def _expanded_nodes(root: yaml.Node, limit: int) -> int:
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            raise YamlLimitError(f"its anchors and aliases expand to more than {limit:,} nodes (PERFCAMPAIGN_MAX_YAML_NODES)")
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
    return count


def load_yaml(text: str) -> Any:
    """`yaml.safe_load` of one document, refused past MAX_YAML_BYTES or MAX_YAML_NODES expanded nodes."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlLimitError(f"{len(text):,} characters, more than {MAX_YAML_BYTES:,} (PERFCAMPAIGN_MAX_YAML_BYTES)")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_nodes(node, MAX_YAML_NODES)
        return loader.construct_document(node)
    finally:
        loader.dispose()
