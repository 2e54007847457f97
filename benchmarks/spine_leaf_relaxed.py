"""How fast could a scheduler be on the 10:1 spine-leaf fabric? The same contention on a big switch.

    python benchmarks/spine_leaf_relaxed.py [--policies fair,sincronia,varys,aalo:sharing=strict]

The trace placed on ``spine-leaf:spines=4,oversub=10`` with ECMP (routing seed 0) sends
each flow between racks over its rack's host link, one leaf uplink to the spine ECMP
chose, that spine's downlink to the other leaf and the other rack's host link. The host
links carry 1 / oversub = 10 times what a rack's four uplinks (or downlinks) can, so they
bind only where a rack's own traffic (sender and receiver in the same rack, 4,911 of the
trace's 706,397 flows) meets its other traffic. Dropping them for the flows between racks
leaves a big switch of 750 ports: the 600 (leaf, spine) uplinks as ingress ports and the
600 (spine, leaf) downlinks as egress ports (index ``leaf * spines + spine`` and
``spine * leaves + leaf``), each 1 Gbit/s / 40; each rack's own flows on a port of its
own at the host rate (ports 600-749).

This is a relaxation, not the spine-leaf fabric: the schedules differ where the host
links bind. What it gives is the time of the big switch's compiled kernels (the fastest
paths coflowopt has) on the same flows, routes between racks and congestion, which is
what bounds from below what a simulator of this design can take on the spine-leaf fabric
itself. Each policy runs in this process, one after another, with ``record=False``; CPU
seconds of the call (``time.process_time``), wall seconds, the mean CCT and the events.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np

import coflowopt as co
from coflowopt.cli.simulate import parse_variants
from coflowopt.fabric import place
from coflowopt.instance import Fabric, Instance
from coflowopt.sim import simulate

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
SPINES = 4
OVERSUB = 10.0


def relaxed(trace: Instance) -> Instance:
    """The trace on the big switch of (leaf, spine) uplinks and (spine, leaf) downlinks."""
    net = place(trace, "spine-leaf", {"spines": str(SPINES), "oversub": str(OVERSUB)})
    A = net.routes
    P = trace.num_ports  # one rack per leaf, one host per rack
    first_uplink = 2 * P  # host uplinks 0..P-1, host downlinks P..2P-1, then leaf -> spine
    rows = np.repeat(np.arange(trace.num_flows), np.diff(A.indptr))
    up = (A.indices >= first_uplink) & (A.indices < first_uplink + P * SPINES)
    spine = np.full(trace.num_flows, -1, np.int64)
    spine[rows[up]] = (A.indices[up] - first_uplink) % SPINES
    far = spine >= 0
    src = np.where(far, trace.flow_src * SPINES + spine, P * SPINES + trace.flow_src)
    dst = np.where(far, spine * P + trace.flow_dst, P * SPINES + trace.flow_dst)
    host = net.fabric.capacity[:P]
    cap = np.r_[np.repeat(host / (OVERSUB * SPINES), SPINES), host]  # uniform ports: order moot
    coflows = tuple(dataclasses.replace(c, src=src[trace.flows_of(k)], dst=dst[trace.flows_of(k)])
                    for k, c in enumerate(trace.coflows))
    return Instance(Fabric(cap, cap), coflows, name="spine-leaf relaxed to a big switch")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policies", default="fair,sincronia,varys,aalo:sharing=strict")
    args = ap.parse_args()
    inst = relaxed(co.read(TRACE))
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"{inst.num_ports} ports, {inst.num_flows} flows; load average {load}")
    print("| policy | CPU s | wall s | mean CCT s | events |")
    print("|---|---|---|---|---|")
    for spec, (name, params) in parse_variants(args.policies).items():  # as --schedulers
        c0, w0 = time.process_time(), time.time()
        res = simulate(inst, name, params, record=False)
        cpu, wall = time.process_time() - c0, time.time() - w0
        mean = float(np.mean(res.completion - inst.release))
        print(f"| {spec} | {cpu:.1f} | {wall:.1f} | {mean:.2f} | {res.events} |", flush=True)


if __name__ == "__main__":
    main()
