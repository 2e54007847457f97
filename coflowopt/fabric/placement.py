"""Putting an instance's ports on the hosts of a topology (``--topology``).

The instance's ports become hosts:

- **spine-leaf**: port ``p`` is host ``p``. By default every port is a leaf with
  one host (``hosts_per_leaf=1``, ``leaves`` = the number of ports), the rack -> leaf
  reading of the Facebook trace, whose 150 ports are racks: the host is the rack's
  link (its capacity, the port rate) and the leaf's uplinks carry ``1 / oversub``
  of it (default 10, the oversubscription of the trace's source cluster), split
  over ``spines`` (default 4) links. ``spine_rate`` instead of ``oversub`` sets the
  leaf-spine capacity directly.
- **fat-tree**: with as many hosts as ports, port ``p`` is host ``p``. With more
  hosts (the trace's 150 racks on the k = 24 fat-tree's 3,456 hosts, as Creek
  replays it), rack ``r`` owns hosts ``floor(r H / P) .. floor((r+1) H / P) - 1``
  (23 or 24 each) and each of a coflow's sender and receiver tasks (the trace's
  mappers and reducers) is put on one of its rack's hosts, uniformly at random
  with the ``seed`` parameter (:func:`spread`). Flow sizes do not change: a
  mapper-reducer flow carries what it carried between racks, but the rack's
  traffic now leaves through many host links (each of the port's rate unless
  ``host_rate`` says otherwise) instead of one, so the host links are far less
  loaded than the trace's rack ports were and the fabric's core decides more.
- **graph**: port ``p`` is the file's host ``p``; capacities come from the file.

The routing (``ecmp``, ``spray``) and its seed are the network's; results depend on
the routing seed under ``ecmp`` and on the placement seed on a fat-tree with more
hosts than ports.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from .._files import natural_number
from .._text import plural
from ..errors import InstanceError
from ..instance import Instance
from .network import Network
from .spec import TOPOLOGIES, json_number
from .topology import FatTree, GraphTopology, SpineLeaf, Topology

__all__ = ["DEFAULT_OVERSUB", "DEFAULT_SPINES", "place", "shuffle_tasks", "spread"]

IntArray = npt.NDArray[np.int64]

DEFAULT_OVERSUB = 10.0
"""Leaf uplink oversubscription of the Facebook trace's source cluster (the Varys paper: 10:1)."""

DEFAULT_SPINES = 4
"""Spines of the rack -> leaf placement when none are given."""


def _port_rate(inst: Instance) -> float:
    cap = inst.fabric.capacity[: 2 * inst.num_ports]
    if not np.all(cap == cap[0]):
        raise InstanceError("placing an instance on a topology needs one capacity for every port "
                            f"(this one has {cap.min():g} to {cap.max():g}); give host_rate")
    return float(cap[0])


def shuffle_tasks(inst: Instance) -> tuple[IntArray, IntArray]:
    """The sender task and the receiver task of each flow, numbered across the instance.

    A coflow whose flows are ``m`` senders times ``R`` receivers in the trace reader's
    order (receiver by receiver, the senders in the same order within each) is
    recognised by the smallest such ``m``: flow ``j`` comes from its sender ``j % m``
    and goes to its receiver ``j // m``. Any other coflow: each flow is its own sender
    and receiver task.
    """
    send = np.empty(inst.num_flows, dtype=np.int64)
    recv = np.empty(inst.num_flows, dtype=np.int64)
    n_send = n_recv = 0
    for k in range(inst.num_coflows):
        sl = inst.flows_of(k)
        src, dst = inst.flow_src[sl], inst.flow_dst[sl]
        w = src.size
        m = _period(src, dst)
        j = np.arange(w, dtype=np.int64)
        if m is None:
            send[sl] = n_send + j
            recv[sl] = n_recv + j
            n_send += w
            n_recv += w
        else:
            send[sl] = n_send + j % m
            recv[sl] = n_recv + j // m
            n_send += m
            n_recv += w // m
    return send, recv


def _period(src: IntArray, dst: IntArray) -> int | None:
    w = src.size
    for m in range(1, w + 1):
        if w % m:
            continue
        blocks_s = src.reshape(-1, m)
        blocks_d = dst.reshape(-1, m)
        if np.all(blocks_s == blocks_s[0]) and np.all(blocks_d == blocks_d[:, :1]):
            return m
    return None


def _check_instance(inst: Any) -> None:
    if not isinstance(inst, Instance):
        raise InstanceError(f"the instance must be an Instance, got {type(inst).__name__}")


def spread(inst: Instance, num_hosts: int, seed: int) -> tuple[IntArray, IntArray]:
    """Hosts of each flow's sender and receiver when the ``P`` ports (racks) spread over
    ``num_hosts`` hosts: rack ``r`` owns hosts ``floor(r H / P)`` up to
    ``floor((r+1) H / P) - 1``, and each task (:func:`shuffle_tasks`) goes to one of its
    rack's hosts, drawn uniformly with ``numpy.random.default_rng(seed)``, senders first,
    in task order."""
    _check_instance(inst)
    for name, value in (("num_hosts", num_hosts), ("seed", seed)):
        if not natural_number(value):
            raise InstanceError(f"{name} must be an integer >= 0, got {value!r:.60}")
    P, H = inst.num_ports, int(num_hosts)
    if H < P:
        raise InstanceError(f"{H} hosts cannot hold the instance's {P} ports")
    lo = (np.arange(P + 1, dtype=np.int64) * H) // P
    rng = np.random.default_rng(seed)
    send, recv = shuffle_tasks(inst)
    out = []
    for task, port in ((send, inst.flow_src), (recv, inst.flow_dst)):
        n = int(task.max(initial=-1)) + 1
        rack = np.zeros(n, dtype=np.int64)
        rack[task] = port
        host = lo[rack] + (rng.random(n) * (lo[rack + 1] - lo[rack])).astype(np.int64)
        out.append(host[task])
    return out[0], out[1]


def place(inst: Instance, topology: str, params: dict[str, Any], *, routing: str = "ecmp",
          routing_seed: int = 0, graph: Topology | None = None) -> Instance:
    """``inst`` on a topology, its ports put on hosts as the module says.

    ``params``: the topology's parameters (strings from ``--topology`` are read as
    numbers), plus ``oversub`` for spine-leaf and ``seed`` (placement) for the fat-tree;
    ``graph``: the topology of ``graph`` (read from its file by the caller).
    """
    _check_instance(inst)
    if topology not in TOPOLOGIES:
        raise InstanceError(f"unknown topology '{topology}' (known: {', '.join(TOPOLOGIES)})")
    if not isinstance(params, Mapping):
        raise InstanceError(f"the topology's parameters must be a mapping (say {{'k': 4}}), got "
                            f"{type(params).__name__}")
    p: dict[str, Any] = {k: json_number(v) if isinstance(v, str) else v for k, v in params.items()}
    P = inst.num_ports
    src, dst = inst.flow_src, inst.flow_dst
    topo: Topology
    if topology == "spine-leaf":
        known = {"leaves", "spines", "hosts_per_leaf", "host_rate", "spine_rate", "oversub"}
        _check_keys(p, known, topology)
        per = p.get("hosts_per_leaf", 1)
        leaves = p.get("leaves", math.ceil(P / per) if isinstance(per, int) and per > 0 else P)
        rate = _host_rate(p, inst)
        spines = p.get("spines", DEFAULT_SPINES)
        if "spine_rate" in p and "oversub" in p:
            raise InstanceError("give spine_rate or oversub, not both")
        if "spine_rate" in p:
            topo = SpineLeaf(leaves, spines, per, rate, p["spine_rate"])
        else:
            topo = SpineLeaf.oversubscribed(leaves, spines, hosts_per_leaf=per, host_rate=rate,
                                            oversub=p.get("oversub", DEFAULT_OVERSUB))
    elif topology == "fat-tree":
        _check_keys(p, {"k", "host_rate", "link_rate", "seed"}, topology)
        if "k" not in p:
            raise InstanceError("the fat-tree needs k (fat-tree:k=24)")
        rate = _host_rate(p, inst)
        topo = FatTree(p["k"], rate, p.get("link_rate"))
        seed = p.get("seed", 0)
        if not natural_number(seed):
            raise InstanceError(f"the placement seed must be an integer >= 0, got {seed!r:.60}")
        if topo.num_hosts > P:
            src, dst = spread(inst, topo.num_hosts, seed)
    else:
        _check_keys(p, set(), topology)
        if not isinstance(graph, GraphTopology):
            raise InstanceError("the graph topology needs its graph (graph=, read from its file: "
                                f"graph:FILE), got {type(graph).__name__}")
        topo = graph
    if P > topo.num_hosts:
        raise InstanceError(f"the instance has {P} ports but the {topo.kind} fabric has only "
                            f"{plural(topo.num_hosts, 'host')}")
    net = Network(topo, routing, routing_seed)
    coflows = []
    for k, c in enumerate(inst.coflows):
        sl = inst.flows_of(k)
        coflows.append(dataclasses.replace(c, src=src[sl], dst=dst[sl]))
    return inst.replace(fabric=net, coflows=tuple(coflows))


def _host_rate(p: Mapping[str, Any], inst: Instance) -> Any:
    """The ``host_rate`` given (checked by the topology: a number > 0), else the port rate."""
    rate = p.get("host_rate")
    return _port_rate(inst) if rate is None else rate


def _check_keys(params: dict[str, Any], known: set[str], topology: str) -> None:
    for key in params:
        if key not in known:
            raise InstanceError(f"unknown parameter '{key}' for topology '{topology}' " + (
                f"(known: {', '.join(sorted(known))})" if known else "(it takes none: its file "
                "gives the graph)"))
