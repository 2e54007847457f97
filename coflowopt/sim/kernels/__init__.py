"""Compiled stretches of the simulation.

A *stretch kernel* advances the simulation from the current time ``t0`` up
to a stop time (an admission or a wake-up) through any number of
internal events (flow completions), re-allocating rates by one policy's
rule at each of them, all in compiled code. The contract, shared by every
kernel:

- input: the admitted, unfinished flows the rule applies to (for priority
  rules, in priority order), every flow's data sent so far (``sent``, exact
  at ``t0``), sizes, the two links of each flow, link capacities, the
  coflow of each flow and each coflow's count of unfinished flows (on
  multi-hop fabrics there are no two links: ``la``/``lb`` are empty and a
  kernel takes the route incidence as CSR among its own arguments,
  :func:`.greedy.greedy_csr_stretch`);
- a kernel may make the next admissions itself (``Stretch.admits``, a
  prefix of ``SimView.upcoming``): a listed coflow's flows are handed to it
  before they are admitted, it admits each at the first event within the
  engine's tolerance of its admission time, after that event's
  completions, and reports when (``Stretch.admitted_at``); the engine then
  books those admissions as its own;
- the kernel returns at ``t_stop`` (the first admission it does not
  make), at the first event at which a coflow completes (a kernel may
  continue through completions of coflows that no other coflow depends on,
  when its policy needs no decision there), or early when its record
  buffer is nearly full; it returns the time reached and the threshold of
  its last event (that event's time plus the engine's tolerance): the engine
  then admits what is due by that threshold, as after an event of its own;
- on return, ``sent`` is exact at the time reached for every flow it
  handled, ``rate`` holds the rates from then on, and the kernel lists
  the flows it completed (with their completion times) and, when asked,
  every constant-rate piece it served in ``[t0, t_return)`` (``pc_*``);
- a kernel whose flows run at their weight times the smaller level of their
  two links (per-flow fair sharing, ``pairs``) records instead one *tied
  piece* per flow, ``(flow, joined, completed, weight)`` in ``pc_*`` when it
  completes, and every change of a link's level, ``(link, time, level)`` in
  ``lv_*`` (its stretch says so: ``Stretch.tied``): the schedule is the same,
  in 1.5 million level changes instead of 232 million pieces on the Facebook
  trace (:class:`coflowopt.schedule.TiedPieces`); the other kernels log no
  levels.

Events closer than the engine's relative tolerance are simultaneous, and
completions at an event are processed together before rates are
recomputed, exactly as the engine does; kernels are tested against the
engine's reference path (:func:`coflowopt.alloc.greedy` etc.).
"""
