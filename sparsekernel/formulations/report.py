"""The KKT report: rows a person reads at a glance, and the same as JSON."""

from __future__ import annotations

import html
import json
import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Sequence

import numpy as np

__all__ = ["Gap", "KKTRow", "KKTReport", "row_from_values"]

#: the colours of a verdict in a notebook (the demo's --pass and --fail)
VERDICT_STYLE = {"PASS": "color:#1a7f37;font-weight:bold", "FAIL": "color:#c62828;font-weight:bold",
                 "n/a": "color:#666", "NOT CERTIFIED": "color:#e65100;font-weight:bold"}


@dataclass(frozen=True)
class Gap:
    """Primal and dual objective values and their gap.

    ``relative`` is |primal - dual| / max(scale, |primal|, |dual|); ``scale`` is 1 for a
    plain cvxpy problem and a machine's ``gap_scale`` for a machine (the sum of its boxes in
    output units, which bounds the gap by the rows' violations), so that the relative gap of
    a machine does not change when its kernel or targets are multiplied by a constant.
    """

    primal: float
    dual: float
    absolute: float
    relative: float

    @classmethod
    def of(cls, primal: float, dual: float, scale: float = 1.0) -> "Gap":
        absolute = primal - dual
        scale = max(float(scale), abs(primal), abs(dual), 1e-300)
        return cls(float(primal), float(dual), float(absolute), float(abs(absolute) / scale))


@dataclass(frozen=True)
class KKTRow:
    """One condition: its largest violation, relative to ``scale``, and where it occurs.

    ``ok`` is None when the condition could not be evaluated (``note`` says why).
    """

    tag: str
    kind: str
    condition: str
    violation: float
    absolute: float
    scale: float
    where: int | None
    ok: bool | None
    note: str = ""


_ROW_FIELDS = tuple(f.name for f in fields(KKTRow))


def _row(*values: Any) -> KKTRow:
    """``KKTRow(*values)`` without the frozen dataclass's nine ``object.__setattr__`` calls (a solve's
    certificate builds about ten rows; the values are those ``__init__`` would store)."""
    row = object.__new__(KKTRow)
    row.__dict__.update(zip(_ROW_FIELDS, values, strict=True))
    return row


def row_from_values(tag: str, kind: str, condition: str, values: Any, scale: float, tol: float,
                    note: str = "") -> KKTRow:
    """A row from per-point (or single) nonnegative violations."""
    v = values if type(values) is np.ndarray and values.dtype == np.float64 else np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return _row(tag, kind, condition, 0.0, 0.0, float(scale), None, True, note)
    at = int(v.argmax())  # the first NaN where there is one (argmax takes NaN as the largest)
    absolute = float(v.flat[at]) + 0.0  # + 0.0 turns -0.0 into 0.0
    if math.isnan(absolute):
        return _row(tag, kind, condition, math.nan, math.nan, float(scale), None, None, note or "not evaluated")
    where = at if v.ndim and absolute > 0 else None
    relative = absolute / scale if scale > 0 else absolute
    return _row(tag, kind, condition, relative, absolute, float(scale), where, bool(relative <= tol), note)


@dataclass(frozen=True)
class KKTReport:
    """Every KKT condition of a problem with its violation, and the duality gap.

    ``ok`` holds when every row was evaluated and, like the relative gap, is
    within ``tol``; a row that could not be evaluated leaves the report
    uncertified (``ok`` False, listed by ``unevaluated``). ``convex`` is False
    when the kernel matrix is not positive semidefinite: the conditions then
    certify a KKT point of the dual, which need not be its optimum.
    """

    title: str
    rows: tuple[KKTRow, ...]
    gap: Gap
    tol: float
    recovered: tuple[str, ...] = ()
    solver_gap: float = math.nan
    notes: tuple[str, ...] = ()
    convex: bool = True

    @property
    def ok(self) -> bool:
        return all(r.ok is True for r in self.rows) and self.gap.relative <= self.tol

    def unevaluated(self) -> list[KKTRow]:
        return [r for r in self.rows if r.ok is None]

    @property
    def max_violation(self) -> float:
        """The largest violation over the evaluated rows and the relative gap; NaN where one of them is NaN (a gap
        of inf - inf), which ``ok`` counts as failing: Python's max kept or dropped a NaN by its place in the list."""
        values = [r.violation for r in self.rows if r.ok is not None] + [self.gap.relative]
        return math.nan if any(math.isnan(v) for v in values) else max(values)

    @property
    def worst(self) -> KKTRow | None:
        rows = [r for r in self.rows if r.ok is not None]
        return max(rows, key=lambda r: r.violation) if rows else None

    def failed(self) -> list[KKTRow]:
        return [r for r in self.rows if r.ok is False]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: plain floats, ints, strings, lists, None for NaN."""
        return _clean({
            "title": self.title, "ok": self.ok, "tol": self.tol,
            "max_violation": self.max_violation,
            "rows": [asdict(r) for r in self.rows], "gap": asdict(self.gap),
            "solver_gap": self.solver_gap, "recovered": list(self.recovered), "notes": list(self.notes),
            "convex": self.convex,
        })

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def __str__(self) -> str:
        lines = [self.title, f"violations relative to each row's scale; tolerance {self.tol:.1e}"]
        if self.recovered:
            lines.append("recovered by the notes' formulas: " + "; ".join(self.recovered))
        lines.extend(self.notes)
        width_tag = max([len("tag")] + [len(r.tag) for r in self.rows])
        width_cond = max([len("condition")] + [len(r.condition) for r in self.rows])
        head = f"  {'tag':<{width_tag}}  {'kind':<23}  {'condition':<{width_cond}}  {'violation':>9}  {'where':>6}  result"
        lines += ["", head, "  " + "-" * (len(head) - 2)]
        for r in self.rows:
            where = "-" if r.where is None else f"n={r.where}"
            mark = "n/a" if r.ok is None else ("PASS" if r.ok else "FAIL")
            value = "n/a" if r.ok is None else f"{r.violation:.1e}"
            lines.append(f"  {r.tag:<{width_tag}}  {r.kind:<23}  {r.condition:<{width_cond}}  {value:>9}  {where:>6}  {mark}")
        g = self.gap
        lines.append("")
        solver = "" if math.isnan(self.solver_gap) else f"; solver's own gap {self.solver_gap:.1e}"
        lines.append(f"  primal {g.primal:.10g}   dual {g.dual:.10g}   gap {g.absolute:.1e} "
                     f"(relative {g.relative:.1e}, {'PASS' if g.relative <= self.tol else 'FAIL'}){solver}")
        worst = self.worst
        if worst is not None:
            at = "" if worst.where is None else f" at n = {worst.where}"
            lines.append(f"  worst row: {worst.tag} {worst.kind}: {worst.condition}, {worst.violation:.1e}{at}")
        n_bad = len(self.failed()) + (not self.gap.relative <= self.tol)     # a NaN gap fails, as in ``ok``
        if self.ok and not self.convex:
            verdict = (f"PASS as a KKT point (all {len(self.rows)} rows and the gap within {self.tol:.1e}); the "
                       f"kernel matrix is not positive semidefinite, so the problem is not convex and this "
                       f"is not a certified optimum")
        elif self.ok:
            verdict = f"PASS (all {len(self.rows)} rows and the gap within {self.tol:.1e})"
        elif n_bad:
            verdict = f"FAIL ({n_bad} of {len(self.rows) + 1} checks above {self.tol:.1e})"
        else:
            verdict = f"NOT CERTIFIED ({len(self.unevaluated())} rows not evaluated; the others pass)"
        lines.extend(f"  {r.tag} {r.kind}: {r.note}" for r in self.unevaluated() if r.note)
        lines.append(f"  result: {verdict}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The table of ``str(self)`` for a notebook, PASS and FAIL coloured, every text escaped."""
        rows = []
        for r in self.rows:
            mark = "n/a" if r.ok is None else ("PASS" if r.ok else "FAIL")
            rows.append([r.tag, r.kind, r.condition, "n/a" if r.ok is None else f"{r.violation:.1e}",
                         "-" if r.where is None else f"n={r.where}", _verdict_cell(mark)])
        g = self.gap
        rows.append(["gap", "primal - dual", f"{g.primal:.10g} - {g.dual:.10g} = {g.absolute:.1e}",
                     f"{g.relative:.1e}", "-", _verdict_cell("PASS" if g.relative <= self.tol else "FAIL")])
        verdict = str(self).rsplit("result: ", 1)[-1]
        word = next(w for w in ("PASS", "FAIL", "NOT CERTIFIED") if verdict.startswith(w))
        above = [f"violations relative to each row's scale; tolerance {self.tol:.1e}", *self.notes]
        if self.recovered:
            above.insert(1, "recovered by the notes' formulas: " + "; ".join(self.recovered))
        below = [f"{r.tag} {r.kind}: {r.note}" for r in self.unevaluated() if r.note]
        worst = self.worst
        if worst is not None:
            at = "" if worst.where is None else f" at n = {worst.where}"
            below.append(f"worst row: {worst.tag} {worst.kind}: {worst.condition}, {worst.violation:.1e}{at}")
        if not math.isnan(self.solver_gap):
            below.append(f"solver's own gap {self.solver_gap:.1e}")
        return html_table(self.title, ["tag", "kind", "condition", "violation", "where", "result"], rows,
                          above=above, below=below,
                          footer=f'result: <span style="{VERDICT_STYLE[word]}">{html.escape(verdict)}</span>')


class Markup(str):
    """Text already in HTML: ``html_table`` puts it in a cell as it is."""


def _verdict_cell(word: str) -> Markup:
    return Markup(f'<span style="{VERDICT_STYLE[word]}">{word}</span>')


def html_table(caption: str, head: Sequence[str], rows: Sequence[Sequence[Any]], above: Sequence[str] = (),
               below: Sequence[str] = (), footer: str = "") -> str:
    """An HTML table for a notebook's ``_repr_html_``: every cell escaped unless it is ``Markup``.

    ``above`` and ``below`` are lines of plain text around the table; ``footer`` is HTML. In a
    table with a head (columns of numbers) numeric cells are right-aligned.
    """
    def cell(value: Any, tag: str = "td") -> str:
        text = value if isinstance(value, Markup) else html.escape(str(value))
        right = head and isinstance(value, str) and _numeric(value)
        return f'<{tag} style="padding:1px 8px;text-align:{"right" if right else "left"}">{text}</{tag}>'

    parts = ['<div class="sparsekernel">', f'<div style="font-weight:bold">{html.escape(caption)}</div>']
    parts += [f'<div style="color:#666">{html.escape(line)}</div>' for line in above]
    parts.append('<table style="border-collapse:collapse">')
    if head:
        parts.append("<thead><tr>" + "".join(cell(h, "th") for h in head) + "</tr></thead>")
    parts.append("<tbody>" + "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in rows) + "</tbody>")
    parts.append("</table>")
    parts += [f'<div style="color:#666">{html.escape(line)}</div>' for line in below]
    if footer:
        parts.append(f"<div>{footer}</div>")
    parts.append("</div>")
    return "\n".join(parts)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value
