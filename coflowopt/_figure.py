"""The figure class of :mod:`coflowopt.plots` (imported once matplotlib is known to be there)."""

from __future__ import annotations

import io

from matplotlib.figure import Figure

__all__ = ["NotebookFigure"]


class NotebookFigure(Figure):
    """A matplotlib figure built without pyplot that a notebook shows as an image.

    IPython shows an object as an image when its class says how (``_repr_png_``). For
    figures that pyplot did not make, the inline backend of a Jupyter kernel says so only
    once pyplot has drawn a figure of its own: until then a cell ending in a figure showed
    ``<Figure size 640x420 with 1 Axes>``.
    """

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png")
        return buf.getvalue()
