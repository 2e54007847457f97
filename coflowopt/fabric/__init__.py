"""Multi-hop fabrics: topologies (spine-leaf, fat-tree, any graph) and routings (ECMP, spray, given).

A :class:`Network` is read through the same flows x links incidence as the big switch
(:class:`coflowopt.Fabric`), with the hosts' uplinks and downlinks as links ``0..2H-1``;
see ``models/fabrics.md``.
"""

from .network import MAX_SPRAY_ENTRIES, ROUTINGS, Network, flow_hash
from .placement import place, spread
from .spec import TOPOLOGIES, network_from_json, network_to_json, parse_topology, topology_from_json
from .topology import FatTree, GraphTopology, SpineLeaf, Topology

__all__ = [
    "MAX_SPRAY_ENTRIES",
    "ROUTINGS",
    "TOPOLOGIES",
    "FatTree",
    "GraphTopology",
    "Network",
    "SpineLeaf",
    "Topology",
    "flow_hash",
    "network_from_json",
    "network_to_json",
    "parse_topology",
    "place",
    "spread",
    "topology_from_json",
]
