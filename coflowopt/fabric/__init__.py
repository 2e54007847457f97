"""Multi-hop fabrics: topologies (spine-leaf, fat-tree, any graph) and routings (ECMP, spray, given).

A :class:`Network` is read through the same flows x links incidence as the big switch
(:class:`coflowopt.Fabric`), with the hosts' uplinks and downlinks as links ``0..2H-1``;
see ``models/fabrics.md``.
"""

from .background import (
    CDFS,
    Background,
    PoissonFlows,
    SizeCDF,
    background_from_json,
    coflows_to_background,
    load_cdf,
    parse_background,
)
from .network import MAX_SPRAY_ENTRIES, ROUTINGS, Network, flow_hash
from .placement import place, spread
from .spec import TOPOLOGIES, network_from_json, network_to_json, parse_topology, topology_from_json
from .topology import FatTree, GraphTopology, SpineLeaf, Topology

__all__ = [
    "CDFS",
    "MAX_SPRAY_ENTRIES",
    "ROUTINGS",
    "TOPOLOGIES",
    "Background",
    "FatTree",
    "GraphTopology",
    "Network",
    "PoissonFlows",
    "SizeCDF",
    "SpineLeaf",
    "Topology",
    "background_from_json",
    "coflows_to_background",
    "flow_hash",
    "load_cdf",
    "network_from_json",
    "network_to_json",
    "parse_background",
    "parse_topology",
    "place",
    "spread",
    "topology_from_json",
]
