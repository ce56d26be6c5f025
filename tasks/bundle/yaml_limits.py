"""YAML read with limits: a manifest or campaign file is small, and its anchors may not expand past a budget.

PyYAML shares an alias's object, so nested anchors (a "billion laughs" file of 680 bytes) load quickly and
explode later, when the labels are stored or the manifest is dumped. The node graph is walked before it
is constructed, counting every node and every scalar's characters as often as aliases repeat them, and
refused past MAX_YAML_NODES or MAX_YAML_EXPANDED: a 4 MB string under an anchor and 100,000 aliases of it
are few nodes, but 400 GB once validated or dumped. The limits can be set from the environment
(docs/security.md).
"""

from __future__ import annotations

import os
from typing import Any

import yaml

MAX_YAML_BYTES = int(os.environ.get("PERFCAMPAIGN_MAX_YAML_BYTES", 8 << 20))
MAX_YAML_NODES = int(os.environ.get("PERFCAMPAIGN_MAX_YAML_NODES", 200_000))
MAX_YAML_EXPANDED = int(os.environ.get("PERFCAMPAIGN_MAX_YAML_EXPANDED_BYTES", 16 << 20))


class YamlLimitError(yaml.YAMLError):
    """A YAML text past a limit; the callers report it as invalid YAML, naming their file."""


def _check_expanded(root: yaml.Node, max_nodes: int, max_chars: int) -> None:
    """Refuse a node graph whose aliases, expanded, hold more than `max_nodes` nodes or `max_chars` characters."""
    count, chars, stack = 0, 0, [root]
    while stack:
        node = stack.pop()
        count += 1
        if count > max_nodes:
            raise YamlLimitError(f"its anchors and aliases expand to more than {max_nodes:,} nodes (PERFCAMPAIGN_MAX_YAML_NODES)")
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
        else:
            chars += len(node.value)
            if chars > max_chars:
                raise YamlLimitError(f"its anchors and aliases expand to more than {max_chars:,} characters "
                                     "(PERFCAMPAIGN_MAX_YAML_EXPANDED_BYTES)")


def load_yaml(text: str) -> Any:
    """`yaml.safe_load` of one document, refused past MAX_YAML_BYTES, or past MAX_YAML_NODES nodes or
    MAX_YAML_EXPANDED characters once its aliases are expanded."""
    return load_yaml_and_node(text)[0]


def load_yaml_and_node(text: str) -> tuple[Any, yaml.Node | None]:
    """`load_yaml`, and the document's node graph (its marks give each item's line).

    Parsed once, by libyaml where PyYAML has it: the pure-Python parser took 1 s per 1,000 sources of a
    manifest, twice (issue 18: a bundle of 10,000 sources)."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlLimitError(f"{len(text):,} characters, more than {MAX_YAML_BYTES:,} (PERFCAMPAIGN_MAX_YAML_BYTES)")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _check_expanded(node, MAX_YAML_NODES, MAX_YAML_EXPANDED)
        return loader.construct_document(node), node
    finally:
        loader.dispose()
