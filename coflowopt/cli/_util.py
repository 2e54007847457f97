"""Shared pieces of the CLI: reading inputs, printing tables and JSON, progress."""

from __future__ import annotations

import argparse
import decimal
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from .. import io
from .._files import parse_json, read_text
from .._text import plural
from ..errors import InputError, InstanceError, require
from ..fabric import ROUTINGS, parse_topology, place, topology_from_json
from ..fabric.network import MAX_SEED
from ..instance import Fabric, Instance
from ..io._common import atomic_writer, check_writable
from ..io.schedule_file import schedule_format

__all__ = [
    "Progress",
    "add_input_arguments",
    "add_json_argument",
    "add_topology_arguments",
    "check_outputs",
    "emit_json",
    "floor_text",
    "format_table",
    "load_instance",
    "nonnegative_int",
    "parse_params",
    "placement",
    "plural",
    "size_text",
    "size_unit",
    "to_jsonable",
]


def floor_text(x: float, digits: int, *, up: bool = False) -> str:
    """``x`` to ``digits`` significant digits, rounded down (``up``: up): a lower bound
    printed rounded to nearest could read above what is proven (782522.52 printed as
    782523), an upper bound below it."""
    if not math.isfinite(x):
        return "-"
    mode = decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR
    d = decimal.Context(prec=digits, rounding=mode).create_decimal(x)
    return format(d, "g")


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """FILE plus --format and --port-rate."""
    parser.add_argument(
        "file", metavar="FILE", help="instance file (JSON, Coflow-Benchmark or Sincronia trace)"
    )
    parser.add_argument(
        "--format",
        choices=sorted(io.FORMATS),
        default=None,
        help="input format (default: detected from the suffix and content)",
    )
    parser.add_argument(
        "--port-rate",
        type=port_rate,
        default=None,
        metavar="R",
        help="capacity of every port in bytes/s for trace formats (default 1.25e8 = 1 Gbit/s)",
    )
    parser.add_argument(
        "--offline", action="store_true",
        help="release every coflow at time 0 (the offline problem; deadlines keep their "
        "distance from the release)",
    )


def add_topology_arguments(parser: argparse.ArgumentParser) -> None:
    """--topology, --routing and --routing-seed: put the instance's ports on a network."""
    g = parser.add_argument_group(
        "fabric (default: the instance's own, the big switch for traces; --topology places a "
        "big-switch instance, and refuses a file with a fabric of its own)")
    g.add_argument(
        "--topology", metavar="SPEC", default=None,
        help="put the ports on a network: spine-leaf[:spines=4,oversub=10,...] (port p = host p, "
        "on leaf p // hosts_per_leaf), fat-tree:k=K[,seed=S] (racks spread over the hosts), or "
        "graph:FILE (a JSON graph); see models/fabrics.md")
    g.add_argument("--routing", choices=list(ROUTINGS[:2]), default=None,
                   help="routing on --topology: ecmp (one equal-cost path per flow, hashed; the "
                   "default) or spray (rate split over all equal-cost paths)")
    g.add_argument("--routing-seed", type=routing_seed, default=None, metavar="N",
                   help="ECMP's hash seed, 0 to 2**64 - 1 (default 0); results under ecmp depend "
                   "on it")


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def load_instance(args: argparse.Namespace) -> Instance:
    """The instance FILE names, on --topology's network if given; its format (given or
    detected) is kept as ``args.input_format``."""
    return placement(args)(read_instance(args))


def read_instance(args: argparse.Namespace) -> Instance:
    """The instance FILE names as the file holds it (--offline applied, --topology not yet:
    :func:`load_instance` puts it there)."""
    path = str(args.file)
    inst, args.input_format = io.loads(
        read_text(path), path=path, format=args.format, port_rate=args.port_rate)
    if getattr(args, "offline", False):
        inst = inst.with_releases(0.0)
    if getattr(args, "topology", None) is not None and not isinstance(inst.fabric, Fabric):
        raise InputError(f"--topology puts a big-switch instance on a network; {path} has its own "
                         "fabric (edit its \"fabric\" object instead)")
    return inst


def placement_record(args: argparse.Namespace) -> dict[str, Any] | None:
    """The --topology, --routing and --routing-seed that put the instance on a network, as a
    schedule file records them (its ``placement``), or None (none given)."""
    spec = getattr(args, "topology", None)
    if spec is None:
        return None
    routing = getattr(args, "routing", None) or "ecmp"
    name, params = parse_topology(spec)
    if name == "graph":  # where the file is, wherever the schedule is checked from
        spec = f"graph:{os.path.abspath(params['file'])}"
    record: dict[str, Any] = {"topology": spec, "routing": routing}
    if routing == "ecmp":
        record["routing_seed"] = getattr(args, "routing_seed", None) or 0
    return record


def placement_options(record: dict[str, Any]) -> str:
    """A placement record as the options that make it."""
    seed = f" --routing-seed {record['routing_seed']}" if "routing_seed" in record else ""
    return f"--topology {record['topology']} --routing {record['routing']}{seed}"


def placement(args: argparse.Namespace) -> Callable[[Instance], Instance]:
    """What --topology, --routing and --routing-seed do to a big-switch instance (the
    identity without --topology); their errors are :class:`InputError` naming the option."""
    spec = getattr(args, "topology", None)
    routing, seed = getattr(args, "routing", None), getattr(args, "routing_seed", None)
    if spec is None:
        if routing is not None or seed is not None:
            raise InputError("--routing and --routing-seed go with --topology")
        return lambda inst: inst
    if routing == "spray" and seed is not None:
        raise InputError("--routing-seed is ECMP's hash seed; spray has none")
    name, params = parse_topology(spec)
    graph = None
    if name == "graph":
        gpath = params.pop("file")
        try:
            graph = topology_from_json({"topology": "graph", **_graph_document(gpath)})
        except InstanceError as exc:
            raise InputError(exc.message, path=gpath,
                             json_path=f"$.{exc.field}".rstrip(".")) from None
        except InputError as exc:  # the file itself: missing, not JSON
            raise InputError(f"--topology graph: {exc}") from None

    def put(inst: Instance) -> Instance:
        try:
            return place(inst, name, params, routing=routing or "ecmp", routing_seed=seed or 0,
                         graph=graph)
        except InstanceError as exc:
            raise InputError(f"--topology {spec}: {exc.message}") from None

    return put


@contextmanager
def naming(path: str) -> Iterator[None]:
    """Errors of the instance that a solver or the simulator finds after it was read (for
    example coflow dependencies a method does not model) name its file."""
    try:
        yield
    except InstanceError as exc:
        raise InputError(str(exc), path=path) from None


def _graph_document(path: str) -> dict[str, Any]:
    """The JSON object of a ``graph:FILE`` (its ``topology`` key, if any, must say graph)."""
    doc = parse_json(read_text(path), path)
    if not isinstance(doc, dict):
        raise InputError("a graph file must hold a JSON object with nodes, hosts and links",
                         path=path, json_path="$")
    if doc.get("topology", "graph") != "graph":
        raise InputError(f"topology must be \"graph\" here, got {doc['topology']!r:.60}", path=path,
                         json_path="$.topology")
    for key in ("routing", "seed", "paths"):
        if key in doc:
            raise InputError("a graph file holds the graph only; give the routing with --routing",
                             path=path, json_path=f"$.{key}")
    return {k: v for k, v in doc.items() if k != "topology"}


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got '{text}'")
    return value


positive_float = _positive_float


def port_rate(text: str) -> float:
    """A port capacity: a finite number no smaller than the smallest normal float64 (a
    subnormal rate loses its digits, and the fabric refuses it with no option named)."""
    value = _positive_float(text)
    if value < sys.float_info.min:
        raise argparse.ArgumentTypeError(
            f"expected a capacity of at least {sys.float_info.min:.3g}, got '{text}'")
    return value


def nonnegative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got '{text}'")
    return value


def _int_at_least(text: str, minimum: int, maximum: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got '{text}'") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got '{text}'")
    if maximum is not None and value > maximum:
        raise argparse.ArgumentTypeError(f"expected an integer from {minimum} to {maximum}, "
                                         f"got '{text}'")
    return value


def positive_int(text: str) -> int:
    return _int_at_least(text, 1)


def nonnegative_int(text: str) -> int:
    return _int_at_least(text, 0)


def routing_seed(text: str) -> int:
    """--routing-seed: ECMP's hash takes 64 bits of it (:data:`coflowopt.fabric.network.MAX_SEED`)."""
    return _int_at_least(text, 0, MAX_SEED)


def size_text(inst: Instance, *, ports: bool = True) -> str:
    """"3 coflows, 5 flows, 1 port": an instance's size as the commands print it."""
    text = f"{plural(inst.num_coflows, 'coflow')}, {plural(inst.num_flows, 'flow')}"
    return text + (f", {plural(inst.num_ports, 'port')}" if ports else "")


def size_unit(args: argparse.Namespace) -> str | None:
    """The unit of sizes read by :func:`load_instance`: ``B`` for a trace (bytes), ``None``
    for a JSON instance (the format states no unit)."""
    return None if getattr(args, "input_format", None) == "json" else "B"


def time_unit(args: argparse.Namespace) -> str:
    """How to label times read by :func:`load_instance`: ``s`` for a trace (its readers
    convert milliseconds to seconds), else the JSON instance's own ``time units``."""
    return "time units" if getattr(args, "input_format", None) == "json" else "s"


def write_instance(args: argparse.Namespace, inst: Any, output: str, fmt: str,
                   **options: Any) -> list[str]:
    """Write ``inst`` to ``output`` in ``fmt``; what the format cannot express is an
    :class:`InputError` naming the input file (if any) and the output not written."""
    try:
        return io.write(inst, output, format=fmt, **options)
    except InstanceError as exc:
        raise InputError(f"{exc.message} (nothing written to {output})",
                         path=getattr(args, "file", None)) from None


STDOUT_OPTIONS = ("--csv", "--summary-csv")
"""Output options that take ``-`` for standard output (the others write files only)."""


def check_outputs(args: argparse.Namespace, outputs: Sequence[tuple[str, str | None]]) -> None:
    """Fail before any work if an output file cannot be written: each ``(option, path)``
    (``None``: none; ``-``: standard output, for :data:`STDOUT_OPTIONS` only) must be
    writable and none may be the input file (``args.file``,
    if any) or another output (links resolved)."""
    seen: dict[str, str] = {}
    if getattr(args, "file", None):
        seen[os.path.realpath(args.file)] = "the input file"
    for option, path in outputs:
        if path == "-" and option == "--schedule":
            raise InputError("--schedule needs a file name ('-', standard output, carries the "
                             "results)")
        if path == "-" and option not in STDOUT_OPTIONS:
            raise InputError(f"{option} cannot be standard output ('-'); name a file (./- for "
                             "a file called '-')")
        if path == "":
            raise InputError(f"{option}: an empty file name: name a file to write")
        if path is None or path == "-":
            continue
        try:
            check_writable(path)
            if option == "--schedule":
                schedule_format(path)  # the suffix names a format
        except InputError as exc:
            raise InputError(f"{option} {exc}") from None
        real = os.path.realpath(path)
        if real in seen:
            raise InputError(f"{option} {path} would overwrite {seen[real]}")
        seen[real] = f"the {option} file"


PLOT_FORMATS = (".png", ".pdf", ".svg")
"""File types ``--plot`` writes (chosen by the file's suffix)."""


def check_plot(path: str | None, option: str, what: str) -> None:
    """Before the work: matplotlib is there and the figure's file (``option``'s value) is
    of a known type (its writability is checked with the other outputs by
    :func:`check_outputs`)."""
    if not path:
        return
    if Path(path).suffix.lower() not in PLOT_FORMATS:
        raise InputError(f"{option} {path}: the file name must end in one of "
                         f"{', '.join(PLOT_FORMATS)}")
    require("matplotlib", "plot", what)


def save_plot(fig: Any, path: str) -> None:
    """Write the figure whole or not at all (:func:`coflowopt.io._common.atomic_writer`),
    the same bytes for the same figure: no creation date in SVG and PDF files, and SVG's
    element ids from a fixed salt."""
    from matplotlib import rc_context

    fmt = Path(path).suffix.lower()[1:]
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt)
    with rc_context({"svg.hashsalt": "coflowopt"}), atomic_writer(path, binary=True) as fh:
        fig.savefig(fh, format=fmt, dpi=120, metadata=metadata)


def parse_params(items: Sequence[str] | None) -> dict[str, str]:
    """``key=value`` pairs from repeated ``--param`` options."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--param expects key=value, got '{item}'")
        if key.strip() in out:  # (the last would win unseen)
            raise InputError(f"--param sets {key.strip()} twice: {key.strip()}={out[key.strip()]} "
                             f"and {item.strip()}")
        out[key.strip()] = value.strip()
    return out


def to_jsonable(value: Any) -> Any:
    """Numbers, arrays and mappings in a form ``json`` accepts (nan/inf -> null)."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if hasattr(value, "value") and hasattr(value, "name"):  # enums
        return value.value
    return value


def emit_json(obj: Any, out: TextIO | None = None) -> None:
    stream = sys.stdout if out is None else out
    json.dump(to_jsonable(obj), stream, indent=2, allow_nan=False)
    stream.write("\n")


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            return "-" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return f"{v:.6g}"
    if value is None:
        return "-"
    return str(value)


def format_table(rows: Iterable[Sequence[Any]], headers: Sequence[str], *, title: str | None = None) -> str:
    """A plain-text table; numbers right-aligned."""
    body = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in body:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [all(_looks_numeric(row[i]) for row in body) if body else False for i in range(len(headers))]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    lines = []
    if title:
        lines.append(title)
    lines.append(fmt(list(headers)))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(fmt(row) for row in body)
    return "\n".join(lines)


def _looks_numeric(cell: str) -> bool:
    if cell in ("-", "inf", "-inf"):
        return True
    try:
        float(cell.rstrip("x%"))
    except ValueError:
        return False
    return True


_bar_lock = threading.Lock()
_shown: list[Progress] = []
"""The progress bars on the terminal now (the last one drawn last): :func:`notice` writes
above them."""


class Progress:
    """A progress bar on stderr, shown only when stderr is a terminal."""

    def __init__(self, total: float, label: str, *, stream: TextIO | None = None) -> None:
        self.total = max(float(total), 1e-300)
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.enabled = self.stream.isatty()
        self._last = 0.0
        self._start = time.perf_counter()
        self.line = ""

    def update(self, done: float) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1 and done < self.total:
            return
        self._last = now
        frac = min(max(done / self.total, 0.0), 1.0)
        bar = "#" * int(30 * frac)
        with _bar_lock:
            self.line = f"{self.label} [{bar:<30}] {100 * frac:5.1f}% {now - self._start:6.1f}s"
            self.stream.write("\r" + self.line)
            self.stream.flush()
            if self not in _shown:
                _shown.append(self)

    def close(self) -> None:
        if self.enabled:
            with _bar_lock:
                if self in _shown:
                    _shown.remove(self)
                self.stream.write("\r" + " " * max(len(self.label) + 50, len(self.line)) + "\r")
                self.stream.flush()


def notice(text: str) -> None:
    """``text`` as a line on stderr; above the progress bar on the terminal, if one is
    drawn (the bar is drawn again below it), rather than after the bar on its line."""
    with _bar_lock:
        bar = _shown[-1] if _shown else None
        if bar is not None:
            bar.stream.write("\r" + " " * len(bar.line) + "\r")
            bar.stream.flush()
        print(text, file=sys.stderr, flush=True)
        if bar is not None:
            bar.stream.write(bar.line)
            bar.stream.flush()
