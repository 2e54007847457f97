"""Fabrics as data: the JSON ``fabric`` object and the ``--topology`` text, both ways.

The JSON object (``coflowopt-instance/2``'s ``"fabric"``, and the file of
``--topology graph:FILE``)::

    {"topology": "spine-leaf", "leaves": 4, "spines": 2, "hosts_per_leaf": 2,
     "host_rate": 1.0, "spine_rate": 0.5,          # or "oversub": 2 instead of spine_rate
     "routing": "ecmp", "seed": 1}
    {"topology": "fat-tree", "k": 4, "host_rate": 1.0, "link_rate": 1.0, "routing": "spray"}
    {"topology": "graph", "nodes": ["h0", "h1", "s0"], "hosts": ["h0", "h1"],
     "links": [["h0", "s0", 1.0], ["h1", "s0", 1.0]], "directed": false,
     "routing": "given", "paths": {"c0": [["h0", "s0", "h1"]]}}

``routing`` defaults to ``ecmp`` and ``seed`` (ECMP's only, an error with the other
routings) to 0; ``paths`` (with routing ``given``)
maps each coflow id to one path per flow, as node names from the flow's source host
to its destination host (hosts are ``h0``, ``h1``, ...; spine-leaf switches
``leaf<i>`` and ``spine<i>``; fat-tree switches ``edge<i>``, ``agg<i>``, ``core<i>``).
Errors are :class:`~coflowopt.errors.InstanceError` whose ``field`` is the JSON
path below the fabric object (``links[3][2]``, ``paths.c0[1][2]``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from typing import Any

from .._files import json_float
from .._text import json_type, value_text
from ..errors import InputError, InstanceError
from .network import ROUTINGS, Network
from .topology import FatTree, GraphTopology, SpineLeaf, Topology

__all__ = ["TOPOLOGIES", "network_from_json", "network_to_json", "parse_topology", "topology_from_json"]

_ROUTING_KEYS = {"routing", "seed", "paths"}


def _got(value: Any) -> str:
    """A JSON value for a message: its kind and the value (``null`` alone)."""
    return "null" if value is None else f"{json_type(value)} {value_text(value)}"


def _number(obj: Mapping[str, Any], key: str, default: float | None) -> float | None:
    """``obj[key]``, a finite number > 0; ``default`` where the key is absent."""
    if key not in obj:
        return default
    value = obj[key]
    if json_float(value) is None or value <= 0:
        raise InstanceError(f"{key} must be a number > 0, got {_got(value)}",
                            field=key)
    return float(value)


def _int(obj: Mapping[str, Any], key: str, default: int | None, minimum: int = 1) -> int:
    if key not in obj and default is None:
        raise InstanceError(f"missing required key '{key}'", field="")
    value = obj.get(key, default)
    if type(value) is not int or value < minimum:
        raise InstanceError(f"{key} must be an integer >= {minimum}, got {_got(value)}", field=key)
    return value


def _spine_leaf(obj: Mapping[str, Any]) -> Topology:
    leaves = _int(obj, "leaves", None)
    spines = _int(obj, "spines", None)
    per = _int(obj, "hosts_per_leaf", 1)
    host_rate = _number(obj, "host_rate", 1.0)
    assert host_rate is not None
    if "oversub" in obj and "spine_rate" in obj:
        raise InstanceError("give spine_rate or oversub, not both", field="oversub")
    if "oversub" in obj:
        ratio = _number(obj, "oversub", None)
        assert ratio is not None
        return SpineLeaf.oversubscribed(leaves, spines, hosts_per_leaf=per, host_rate=host_rate,
                                        oversub=ratio)
    spine_rate = _number(obj, "spine_rate", host_rate)
    assert spine_rate is not None
    return SpineLeaf(leaves, spines, per, host_rate, spine_rate)


def _fat_tree(obj: Mapping[str, Any]) -> Topology:
    k = _int(obj, "k", None, 2)
    host_rate = _number(obj, "host_rate", 1.0)
    assert host_rate is not None
    return FatTree(k, host_rate, _number(obj, "link_rate", None))


def _graph(obj: Mapping[str, Any]) -> Topology:
    for key in ("nodes", "hosts", "links"):
        if key not in obj:
            raise InstanceError(f"missing required key '{key}'", field="")
        if not isinstance(obj[key], list):
            raise InstanceError(f"{key} must be an array, got {json_type(obj[key])}", field=key)
    for key in ("nodes", "hosts"):
        for i, name in enumerate(obj[key]):
            if type(name) not in (str, int):
                raise InstanceError(f"a node name must be a string or an integer, got "
                                    f"{_got(name)}", field=f"{key}[{i}]")
    rows = []
    for i, row in enumerate(obj["links"]):
        if not isinstance(row, list) or len(row) != 3:
            raise InstanceError(f"a link must be [tail, head, capacity], got {row!r:.60}",
                                field=f"links[{i}]")
        u, v, c = row
        cap = json_float(c)
        if cap is None:
            raise InstanceError(f"a capacity must be a finite number, got {_got(c)}",
                                field=f"links[{i}][2]")
        rows.append((str(u), str(v), cap))
    directed = obj.get("directed", True)
    if type(directed) is not bool:
        raise InstanceError(f"directed must be true or false, got {directed!r:.60}", field="directed")
    return GraphTopology(tuple(str(n) for n in obj["nodes"]), tuple(str(h) for h in obj["hosts"]),
                         tuple(rows), directed)


TOPOLOGIES: dict[str, tuple[Callable[[Mapping[str, Any]], Topology], frozenset[str]]] = {
    "spine-leaf": (_spine_leaf, frozenset({"leaves", "spines", "hosts_per_leaf", "host_rate",
                                           "spine_rate", "oversub"})),
    "fat-tree": (_fat_tree, frozenset({"k", "host_rate", "link_rate"})),
    "graph": (_graph, frozenset({"nodes", "hosts", "links", "directed"})),
}
"""Topology name -> (builder from the JSON object, the keys it reads)."""


def topology_from_json(obj: Any) -> Topology:
    """A topology from its JSON object (the routing keys are allowed and ignored)."""
    if not isinstance(obj, dict):
        raise InstanceError(f"a fabric must be an object, got {json_type(obj)}", field="")
    name = obj.get("topology")
    if name not in TOPOLOGIES:
        raise InstanceError(f"unknown topology {name!r:.60} (known: {', '.join(TOPOLOGIES)})",
                            field="topology")
    build, keys = TOPOLOGIES[name]
    for key in obj:
        if key not in keys and key not in _ROUTING_KEYS and key != "topology" and not key.startswith("_"):
            raise InstanceError(f"unknown key '{key}' for topology '{name}' (known: "
                                f"{', '.join(sorted(keys | _ROUTING_KEYS))})", field=key)
    return build(obj)


def network_from_json(obj: Any) -> Network:
    """A :class:`Network` from its JSON object."""
    topo = topology_from_json(obj)
    routing = obj.get("routing", "ecmp")
    if routing not in ROUTINGS:
        raise InstanceError(f"unknown routing {routing!r:.60} (known: {', '.join(ROUTINGS)})",
                            field="routing")
    if "seed" in obj and routing != "ecmp":  # silently ignored, it would read as if it mattered
        raise InstanceError(f"seed is ECMP's hash seed; routing '{routing}' has none (remove it)",
                            field="seed")
    seed = obj.get("seed", 0)
    if type(seed) is not int or seed < 0:
        raise InstanceError(f"seed must be an integer >= 0, got {_got(seed)}",
                            field="seed")
    paths = obj.get("paths")
    if paths is not None:
        if not isinstance(paths, dict):
            raise InstanceError(f"paths must be an object (coflow id -> paths), got "
                                f"{json_type(paths)}", field="paths")
        for cid, flows in paths.items():
            if not isinstance(flows, list):
                raise InstanceError(f"the paths of coflow '{cid}' must be an array of paths, got "
                                    f"{json_type(flows)}", field=f"paths.{cid}")
            for i, p in enumerate(flows):
                if not isinstance(p, list):
                    raise InstanceError(f"a path must be an array of node names, got "
                                        f"{_got(p)}", field=f"paths.{cid}[{i}]")
        paths = {cid: tuple(tuple(str(n) for n in p) for p in flows) for cid, flows in paths.items()}
    return Network(topo, routing, seed, paths)


def network_to_json(net: Network, ids: Collection[str] | None = None) -> dict[str, Any]:
    """The JSON object that :func:`network_from_json` reads back as ``net``; with ``ids``,
    the given paths of those coflows only (an instance's file holds its own coflows' paths,
    not those of coflows a subset dropped)."""
    out: dict[str, Any] = {"topology": net.topology.kind, **net.topology.params(),
                           "routing": net.routing}
    if out.get("link_rate") is None:
        out.pop("link_rate", None)
    if net.routing == "ecmp":
        out["seed"] = net.seed
    if net.paths is not None:
        out["paths"] = {cid: [list(p) for p in ps] for cid, ps in net.paths.items()
                        if ids is None or cid in ids}
    return out


def parse_topology(text: str) -> tuple[str, dict[str, str]]:
    """``--topology NAME[:KEY=VALUE[,KEY=VALUE...]]`` as (name, parameters);
    ``graph:FILE`` gives ``{"file": FILE}``."""
    if not isinstance(text, str):
        raise InputError(f"--topology: a text such as 'spine-leaf:spines=4', got {text!r:.60}")
    name, _, rest = text.partition(":")
    name = name.strip()
    if name not in TOPOLOGIES:
        raise InputError(f"--topology '{text}': unknown topology '{name}' (known: "
                         f"{', '.join(TOPOLOGIES)})")
    if name == "graph":
        if not rest.strip():
            raise InputError(f"--topology '{text}': give the graph's file, graph:FILE")
        return name, {"file": rest.strip()}
    params: dict[str, str] = {}
    for pair in (p.strip() for p in rest.replace(":", ",").split(",")) if rest.strip() else ():
        key, eq, value = pair.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise InputError(f"--topology '{text}': expected KEY=VALUE, got '{pair}'")
        if key.strip() in params:
            raise InputError(f"--topology '{text}' sets {key.strip()} twice")
        params[key.strip()] = value.strip()
    return name, params


def json_number(text: str) -> int | float:
    """A ``--topology`` value as the JSON number it stands for."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return json.loads(json.dumps(text))  # left a string: the builder names it
