"""The KKT report (``formulations.report``, where the certificate of every solve is built),
under the name the duality module has always given it."""

from ..formulations.report import Gap, KKTReport, KKTRow, _clean, row_from_values

__all__ = ["Gap", "KKTRow", "KKTReport", "row_from_values", "_clean"]
