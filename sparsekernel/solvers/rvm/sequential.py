"""Algorithm 7.2, sequential sparse Bayesian learning, once for every likelihood.

Every likelihood is fitted by the same steps (``converge``, ``pool_step``,
``best_step``). For the Gaussian (``Conjugate``) the state is the exact
posterior and the steps below keep it by rank-one updates. For any other
likelihood (``fast_laplace``: Bernoulli, softmax, Poisson) the problem at the
Laplace mode is a Gaussian regression with noise precision matrix B in place
of beta I and targets t_hat = Phi w* + B^-1 (t - y) (7.117)-(7.119); whitened
by B^(1/2) it is the regression at beta = 1, so blocks of the same steps run
on it, by ``fast_regression`` itself, and the mode is found again after each
block (kept only when the Laplace evidence (7.114) rises). The rest of this
docstring describes the Gaussian fast path.

The state is the posterior N(m, Sigma) over the included basis functions and
the factors S_i, Q_i (7.102)-(7.103) of a pool of candidates. Each step

  1. gets s_i, q_i: for excluded functions s = S, q = Q; for included ones
     (7.104)-(7.105) in the cancellation-free form s_i = gamma_i / Sigma_ii,
     q_i = m_i / Sigma_ii (``included_sparsity_quality``),
  2. finds the single alpha_i move of largest gain (Result 7.18): add
     (q^2 > s, excluded; gain (x - 1 - ln x)/2, x = q^2/s), re-estimate
     (q^2 > s, included, alpha = s^2/(q^2 - s) (7.101)) or delete
     (q^2 <= s, included), each gain lambda(new) - lambda(old) (7.97),
  3. takes it and updates Sigma, m, S and Q by rank-one formulas (gap 7.7;
     Tipping and Faul, 2003, appendix): O(|T| M) per step over the tier T,
  4. re-estimates beta (step 8) instead, when that is worth more: the
     (7.88) value, cheap to get from m and Sigma, would move ln beta by more
     than ``beta_tol`` and the move's estimated gain exceeds the best alpha
     step's times the relative cost of a beta step (``beta_step_due``; under
     a Gamma hyperprior, after any alpha step that moves (7.88) by more than
     ``beta_tol``). The (7.88) value is kept if it does not lower the
     evidence, else the EM value of gap 7.6 (which cannot); Sigma, m and S, Q
     over the tier are then recomputed from a Cholesky factor.

The tier. S_i and Q_i matter only for the functions a step may add, and most
excluded functions are far from it (x = q^2/s well below 1). So the steps
update S, Q over a tier T of the pool: the ``TIER_SIZE`` excluded functions of
largest x (every one with x > 1 when there are more). Included functions need
no S, Q (their s, q come from Sigma and m), and a deleted one gets its exact
S, Q from its s, q at the deletion (``delete_function``); it may be added
again once the tier is chosen again. Every max(refresh_every, M) steps
``reselect`` recomputes S, Q of the whole pool from the current Sigma and m
and chooses the tier again; before any convergence test ``refresh``
recomputes Sigma, m and S, Q from a fresh Cholesky factor (as a beta step
does over the tier), which also clears the rounding that rank-one updates
accumulate. A result is therefore checked against every function of the
pool, as without a tier; the tier only decides which functions the steps
look at in between.

As each alpha step maximises the evidence exactly in one coordinate and each
beta step is checked, the log evidence does not decrease in exact arithmetic
(under a Gamma hyperprior the objective is the evidence plus the log prior; the
value tracked and recorded is the evidence alone). The recorded values are
those the steps track by rank-one updates, and they carry their rounding: on
targets far from zero (an offset 1e6 times their spread, 30 points) entries
fell by up to 2.6 nats, and at 1e8 they lost every digit (the fit then stops
at its iteration cap and warns); the certificate (``certificate.evidence_report``)
recomputes (7.85) at the returned point. The run stops when no step gains
more than ``tol`` nats and beta has settled.

Safeguards. A candidate whose S_i is below ``span_tol`` beta ||phi_i||^2 lies
numerically in the span of the included columns (its S_i, Q_i are then
rounding noise), and one whose cosine with an included column exceeds
``align_max`` copies it (duplicated training points: the evidence depends on
1/alpha_j + 1/alpha_k only); neither is added (Tipping and Faul's alignment
test). beta is bounded by ``beta_max``. A safeguard must not turn a
non-stationary point into a "converged" one: when, at the end, an excluded
function it refuses would gain more than ``tol`` (``refused_gain``), the steps
run again with the tests at ``SPAN_RETRY`` and ``ALIGN_RETRY``
(``_span_retry``), kept only if a fresh Cholesky factor confirms a higher
evidence; if a refused gain remains the run is reported not converged, with
the gain (``FastOutcome.refused``).

Escapes and starts. Single-alpha steps can stop where the noise estimate is
too high: every further function is, alone, below the noise, while several
together and a larger beta would raise the evidence. The beta step taken
early (after ``beta_start`` steps, with a handful of functions) sets the noise
to the misfit of that small model, and the steps then stay in its basin.
Three moves leave it:

* ``escape`` multiplies beta by ``restart_factor``, holds it while the alpha
  steps converge, releases it, and keeps the result only if its evidence is
  higher. Another escape is tried (up to ``restarts`` in all) only after one
  that raised the log evidence by at least ``restart_gain`` nats.
* ``held_start`` starts again from the empty model with beta held at
  ``HOLD_FACTORS`` times the initial beta until the alpha steps converge (the
  model grows on the low-noise side, as MacKay's re-estimation does from all
  functions), then re-estimates beta only at alpha optima (a continuation in
  beta), then runs as usual. The run of the highest evidence is kept.
* ``withheld_start`` is a held start with the ``withheld`` functions (the
  bias column) out of its pool until its steps converge; then they are
  offered like any other (bases of at most ``WITHHELD_SIZE`` functions).

Then ``mackay_polish`` re-estimates every kept alpha and beta jointly by
(7.87)-(7.88) while that raises the evidence, and the steps run again, so
the result is certified by the same single-alpha test.

On a basis of at most ``TOP_DOWN_SIZE`` functions twelve (or sixteen) more starts come from
the other end (``top_down_start``): MacKay's re-estimation from every
function at alpha_i = 1, 1e-2, 1e-4 and 1e-6 (unit-norm columns) and at
Tipping's one alpha for the caller's columns (t in units of its standard
deviation) at 1e-3, 0.1 and 10 times it (``FastOptions.raw_starts``),
MacKay's with beta held until its alphas settle from 1, 1e-4 and 1e-6
(``TOP_DOWN_HELD_MACKAY_ALPHAS``) and, where some column is nearly constant
beside the bias, from the centred starts (``FastOptions.centred_starts``), and EM's from alpha_i = 1
(``TOP_DOWN_EM_ALPHAS``; and held, ``TOP_DOWN_HELD_EM_ALPHAS``), copies merged, then the
steps and the polish; up to ``TOP_DOWN_WIDE_SIZE``
functions, the one from 1e-4, which prunes the clearly hopeless functions
from its first iteration (``TOP_DOWN_WIDE_HOPELESS``). Wide kernels give the
evidence several maxima, and the steps from the empty model and the
re-estimation from the full one reach different ones, neither always the
higher (benchmarks/rvm_accuracy.py); the highest is kept, each start judged
after the steps its span test refused (``_unrefused``) and compared by (7.85)
recomputed (``posterior.Whitened``) beyond its estimated rounding, except that a start which ends
with the noise at its floor (the model interpolating t) does not replace one
that ends at some noise (``_floor_over_interior``). The sweeps over the whole basis come
last.

The pool. S_i and Q_i need phi_i^T phi_j for every candidate i and included
j; over all N functions that is a pass over the N x N kernel per added
function. So the steps work on a pool of P candidates whose Gram matrix
Phi_P^T Phi_P they hold (P x P), first chosen by q_i^2 / s_i and spread
evenly over the basis. When nothing in the pool can raise the evidence, a
sweep computes the exact S_i, Q_i of every function outside it (one blockwise
pass over the kernel, reusing the products already computed in earlier
sweeps) and brings in those that would gain more than ``sweep_tol``; when
none would, those that would gain more than ``tol``, so that a converged run
has no function anywhere that gains more than ``tol`` (the stopping rule of
every method). With P >= M the pool is the whole basis and there is no
sweep.

All quantities here are in the solver's units: targets of unit variance and
columns of unit mean square (see ``checks``), so ``alpha_max`` and the beta
bound are dimensionless.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from ..._threads import blas_threads, limit_blas
from .posterior import (
    FLAT,
    covariance_from_factor,
    LOG_2PI,
    Hyperprior,
    alpha_gain,
    alpha_star,
    not_positive_definite,
    factors_from_posterior,
    included_sparsity_quality,
    whitened_posterior,
)
from ._bound_loops import (
    add_function,
    aligned,
    best_excluded_flat,
    best_included_flat,
    beta_step_due,
    delete_function,
    factors_over_rows,
    gather_rows,
    moves_beta,
    pool_steps,
    posterior_factor,
    shift,
    symmetrize,
    tier_rows,
)
from ...errors import SolverError
from .design import DenseDesign, Design, WeightedDesign, gram_matrix, transposed_product
from .laplace import Laplace, ModeOptions, find_mode, laplace_log_evidence, whitened_problem
from .checks import ALPHA_INIT, DEFAULT_MAX_ITER
from .likelihood import Likelihood
from .reestimation import (IterativeOptions, LaplaceIterativeOptions, Whitening, iterative_laplace,
                           iterative_regression)

__all__ = ["FastOptions", "FastOutcome", "fast_regression", "fast_laplace", "Conjugate"]

#: Share of the first pool taken by alignment with t; the rest is an even sample.
POOL_BEST = 0.25
POOL_SEED = 0
#: An escape converges with beta held to HOLD_TOL times the tolerance (it only explores).
HOLD_TOL = 10.0
#: Steps taken per call of the compiled loop (``pool_steps``) at most.
STEP_BLOCK = 512
#: Columns of the first Phi_P^T Phi_a buffer; it doubles when full.
FIRST_CAPACITY = 64
#: Excluded pool members in the tier: the best by x = q^2/s (all with x > 1 when more; see ``_State.select_tier``).
TIER_SIZE = 150
#: Further starts (``held_start``): beta held at these multiples of the initial beta, then released.
HOLD_FACTORS = (0.25,)
#: Tolerance factor of the held start's middle stage (beta re-estimated at alpha optima only); 0: none.
HELD_MIDDLE = 10.0
#: At most this many joint MacKay re-estimations of the kept alphas and beta at the end (``mackay_polish``).
POLISH_SWEEPS = 50
#: Top-down starts (``top_down_start``): MacKay's re-estimation over the pool from alpha_i = each of these
#: (``method="mackay"``'s start, and priors 1e2 and 1e4 times weaker: on raw, badly scaled inputs the
#: near-constant kernel columns need large weights, and the weakest start reached 4-25 nats more on
#: Boston housing raw and 15 on breast cancer raw; benchmarks/rvm_accuracy.py). The classification's starts.
TOP_DOWN_ALPHAS = (ALPHA_INIT, 1e-2 * ALPHA_INIT, 1e-4 * ALPHA_INIT)
#: The regression's top-down starts on bases of at most TOP_DOWN_SIZE functions add one from 1e-6: on
#: Boston housing with raw inputs (gamma "scale": the kernel sees almost only tax and black, and many
#: columns nearly coincide) it ends 28 nats (solver units) above the 1e-4 start, -1029.9 against
#: -1074.9 in the data's units, RMSE 4.4 against 5.2 (test_rvm_maxima.py's Boston test); on friedman2 with
#: raw inputs 179 nats above the others, at a conditioning (cond C ~ 5e15) where (7.85) itself has an
#: estimated rounding of 18 nats (``_chosen_start``). The wide start (TOP_DOWN_WIDE_SIZE) stays at 1e-4, where it
#: reaches 17 nats more than from 1e-6 on friedman1 at N = 1,000 (gamma 0.1, raw inputs).
TOP_DOWN_REGRESSION_ALPHAS = TOP_DOWN_ALPHAS + (1e-6 * ALPHA_INIT,)
TOP_DOWN_WIDE_ALPHA = 1e-4 * ALPHA_INIT
#: And EM's re-estimation from alpha_i = each of these (regression, bases of at most TOP_DOWN_SIZE): from
#: the same start EM's path leads to other maxima than MacKay's, and on 9 of the 224 cells of
#: benchmarks/rvm_fuzz.py (N = 220) EM, then the steps, ended 1.03-4.69 nats above every other start of the
#: fast method (test_rvm_maxima.py). It costs about a third more time there (6.9 -> 9.1 s over the 56 cells of
#: one draw) and 0.1-1 s at N = 480; capped at 100 iterations it saved a tenth of that and lost a cell.
TOP_DOWN_EM_ALPHAS = (ALPHA_INIT,)
#: EM's start from these alpha_i with beta held until its alphas settle (``IterativeOptions.hold_beta``), the
#: schedule ``method="em"`` also runs: on Boston housing (raw X, gamma "scale") it reached a maximum 7.5 nats above
#: every other start (-1020.9 against -1028.4), at 0.2-0.5 s of its 242-725 iterations there.
TOP_DOWN_HELD_EM_ALPHAS = (ALPHA_INIT,)
#: MacKay's starts from these alpha_i with beta held until its alphas settle (the schedule ``method="mackay"``
#: also runs, from its ``alpha_init``): where its update no longer factors it goes on on the whitened columns
#: (``reestimation.Whitening``), and on benchmarks/rvm_accuracy.py's raw friedman2 (0.1 and 10 x "scale"),
#: friedman3 (0.1 x) and Boston housing (0.1 and 10 x) its ends reached maxima 3-160 nats above every other start
#: (friedman2 at 0.1 x "scale": -1643.97 against -1703.02 without them and -1805.19 before the continuation, test
#: RMSE 37.5 against 127.3 and 313.0); before that
#: continuation, held, they gained on one cell of six tried (friedman2 standardised, 0.1 x "scale": 2.8 nats) at
#: 30-80% more time
TOP_DOWN_HELD_MACKAY_ALPHAS = (ALPHA_INIT, 1e-4 * ALPHA_INIT, 1e-6 * ALPHA_INIT)
#: The centred starts (``centred_alphas``): alpha_i = alpha_init x each factor x the relative variance of column i (its
#: variance about its mean over its mean square), for the classification's top-down starts and for ``method="mackay"`` /
#: ``"em"`` (classification; regression's: ``regression._centred``). Under a linear kernel on inputs offset by 100-1000
#: (two classes by a linear rule in 3 inputs) each column of unit mean square is c 1 + v with |v| / |c| ~ 1 / (sqrt(3)
#: offset); the bias takes c, the weight v needs is ~offset times beyond a unit prior, and from alpha_i = 1 (at offset
#: 300 also from the fast method's 1e-2 and 1e-4) every alpha ran off: the bias alone, test accuracy ~0.5, 17-113 nats
#: of (7.114) below the maximum a weak start reaches (accuracy 0.93-0.99). Factor 1 rescued offsets 100 and 300 but not
#: 1000. Over six draws (N = 60, 120, 200) at offsets 100, 300 and 1000, the cells within 1 nat of the highest (7.114)
#: of any start, at the defaults: fast 4 -> 17 of 18, MacKay 0 -> 17, EM 0 -> 15 (0.1 and 0.01 only: 17, 16, 14); the
#: misses at offset 1000 (one draw for all three; EM another) and EM's at 300 on one draw of 60 points, where the
#: informative part of a column is ~1e-7 of it and the paths lose the mode's definiteness or collapse. At offset 3000 no
#: start, plain or centred, reaches it. The weak factors also reach higher maxima of wide Gaussian kernels on raw inputs
#: (benchmarks/rvm_accuracy.py, 0.1 x gamma "scale"): breast cancer -74.5 -> -60.7 nats (test error 0.099 -> 0.070),
#: wine -77.6 -> -60.9 (0.315 -> 0.093; certified since the softmax certificate's S is a projected norm,
#: ``certificate._SoftmaxProjection``). The classification matrix took 57 s against 32 (the other cells' evidence
#: unchanged or higher).
CENTRED_FACTORS = (0.1, 0.01, 1e-3, 1e-4)
#: The centred starts run only when some column's relative variance is below this (a column nearly constant beside
#: the bias); on ordinary columns (relative variance ~1) they would start nearly where the plain starts do.
CENTRED_BELOW = 1e-2
#: A column whose relative variance is at most this carries nothing beyond the bias (the bias column itself: 0):
#: its centred alpha_i is alpha_init.
CENTRED_FLAT = 1e-12
#: A top-down start's re-estimation (MacKay's or EM's) stops by its own rule at no tighter a tol than this (the
#: methods' default): it chooses the basin, and the steps that follow it climb to the fit's own tol. At a
#: fit's tol of 1e-10 the EM start alone took 41 s on 300 points (sinc, 20,000 iterations of O(N^3)) against
#: 0.6 s for the rest of the fit.
TOP_DOWN_TOL = 1e-3
#: A top-down start's maximum with more functions than the incumbent's replaces it only when higher by this
#: many nats (``worth_replacing``); with no more functions, when higher by tol.
TOP_DOWN_GAIN = 1.0
#: The classification's top-down starts (``_top_down_pairs``) prune alpha_i above this (solver units: a
#: weight of prior sd 0.01 on a column of unit mean square). Under the Laplace approximation MacKay's alphas
#: run off to infinity slowly and the pairs on their way (each worth far less than tol) stayed in the model
#: (Ripley: 47 functions at alpha ~ 1e7, 0.2 nats above the 4-function maximum); the moves after the start
#: add back any pair that gains. For the regression the same threshold cost up to 2.5 nats
#: (friedman2, Boston housing), so there the start prunes at ``alpha_max``.
TOP_DOWN_PRUNE = 1e4
#: Top-down starts run when the whole basis has at most this many functions: MacKay's iterations over
#: it then cost milliseconds (O(M^3) each). On larger bases they cost several times the steps from the
#: empty model, and over a subset of the basis they gained little (1-5 nats on friedman1 at N = 1,000).
TOP_DOWN_SIZE = 500
#: On bases of TOP_DOWN_SIZE to this many functions one top-down start runs, from TOP_DOWN_WIDE_ALPHA:
#: friedman1 at N = 1,000 with raw inputs and gamma 0.1 (issue 16) ends 106 nats higher
#: from there (-1865.7 against -1971.6; noise sd 0.995, the truth 1) for about 1 s more at N = 1,000.
TOP_DOWN_WIDE_SIZE = 1500
#: On bases of at most this many functions (those where a top-down start runs) each held start runs a second
#: time with ``fast_regression``'s ``withheld`` functions (the bias column) out of its pool until it converges
#: (``withheld_start``; where the pool holds them: with ``pool_size`` below N it may not). On friedman2 with raw inputs at N = 800 (gamma "scale") the fit kept 2 functions, noise
#: sd 332 (the truth 125), RMSE 314, and reaches 18 functions, sd 125, RMSE 37 and 653 nats more with it (reported
#: unconverged there: nearly collinear columns, an addition the span test refuses would still gain); at N = 1,000
#: (friedman1, raw inputs, gamma 0.5) it costs 0.02-0.09 s of 0.4. Above, a held start costs seconds (N = 5,000,
#: friedman1 standardised: 12.1 -> 16.9 s, to the same maximum), and only the held start with the bias runs.
WITHHELD_SIZE = TOP_DOWN_WIDE_SIZE
#: That wide start also prunes, from its first iteration, every function with q_i^2 <= this times s_i
#: (``reestimation._hopeless``): MacKay's alphas take ~15 iterations of O(M^3) at M ~ N to run off, and
#: the start cost 0.6-0.7 s of a 0.9 s fit at N = 1,000. At 0.3 it costs half (0.99 -> 0.50 s on the
#: speed line of benchmarks/rvm_accuracy.py, same evidence) and ends within -4 to +6 nats of the unpruned
#: start over 7 friedman1 cells at N = 700-1,000 (gamma 0.1-0.5); at 1 (every hopeless function) it lost
#: up to 15 nats, at 0.01 it saved a quarter of the time.
TOP_DOWN_WIDE_HOPELESS = 0.3
#: Pool of candidate pairs of ``fast_laplace``'s runs on the effective problem (sweeps reach the rest).
LAPLACE_POOL = 500
#: Single moves tried one by one, each at its own mode, when the best one lowers the Laplace evidence.
TRY_MOVES = 8
#: A run where no move raises (7.114) has converged when no move gains more than this times tol on the
#: effective problem (the certificate's tolerance: ``RVC.report_`` uses 10 tol).
STUCK_TOL = 10.0
#: The first model of ``fast_laplace``: this many pairs evenly spread over the basis, at this alpha (solver units).
SPREAD_START = 100
SPREAD_ALPHA = 1.0
#: ``fast_laplace`` also starts from the empty model, and tries MacKay's joint move once at the first
#: single-move maximum, when there are at most this many pairs (each costs about one more run).
EMPTY_START_MAX = 2500
#: Steps of ``fast_laplace``'s first block on the effective problem; a kept block doubles the next one's.
FIRST_BLOCK = 64
#: The span test's tolerance when the default one refused gains (``_span_retry``).
SPAN_RETRY = 0.0
#: The alignment test's cosine in ``_span_retry``: only copies to rounding are refused.
ALIGN_RETRY = 1.0 - 1e-12
#: ``_span_retry``'s own step budget: this many per pool member, at least ``SPAN_RETRY_MIN_STEPS``. Without
#: the tests the steps can cycle on nearly collinear columns (sinc, N = 150, gamma 0.3 / var(x): 9,982 steps,
#: 0.6 s, then refused), and the retry used up the run's ``max_iter``; kept retries took at most 2,588
#: (friedman1, N = 1,000, gamma 0.05-0.1).
SPAN_RETRY_STEPS = 5
SPAN_RETRY_MIN_STEPS = 1000

Array = NDArray[np.float64]
Index = NDArray[np.intp]


@dataclass(frozen=True)
class FastOptions:
    """Named thresholds of the fast algorithm (solver units)."""

    tol: float
    max_iter: int
    alpha_max: float
    beta_max: float
    pool_size: int
    beta_tol: float  # beta is re-estimated only when (7.88) would move ln beta by more than this
    sweep_tol: float = 0.0  # an outside function re-enters the pool when it gains more than this
    restarts: int = 5  # escape attempts from a local maximum (0: plain Algorithm 7.2)
    restart_factor: float = 2.0  # beta is multiplied by this at an escape attempt
    restart_gain: float = 1.0  # another escape is tried only after one that gained this many nats
    hold_factors: tuple | None = None  # further starts: beta held at factor x the initial beta (None: HOLD_FACTORS)
    polish_sweeps: int = POLISH_SWEEPS  # joint MacKay re-estimations of the kept alphas and beta at the end
    refresh_every: int = 25  # S, Q of the whole pool again after max(refresh_every, M) rank-one steps
    beta_start: int = 10  # no beta re-estimation in the first steps (Tipping and Faul's convention)
    beta_cost: float = 0.5  # a beta step costs about beta_cost M alpha steps (see ``beta_step_due``)
    prior: Hyperprior = FLAT
    update_beta: bool = True
    span_tol: float = 1e-6  # S_i <= span_tol beta ||phi_i||^2: phi_i numerically in the active span
    align_max: float = 1.0 - 1e-6  # cosine above which a candidate copies an included function
    #: more top-down starts, each alpha_i per column of the design (see ``regression.raw_units_starts``)
    raw_starts: tuple[Array, ...] = ()
    #: more top-down starts, beta held, each alpha_i per column of the design: the centred starts
    #: (``centred_alphas``, ``regression._centred``), where some column is nearly constant beside the bias
    centred_starts: tuple[Array, ...] = ()


@dataclass(frozen=True)
class FastOutcome:
    """What the fast run hands back to ``regression`` or ``laplace_fit`` (solver units)."""

    active: Index  # basis indices of the included functions (pairs i O + k under ``fast_laplace``)
    alpha: Array
    beta: float
    log_evidence: Array  # history, one entry per step, first = the empty model
    iterations: int
    converged: bool
    sweeps: int
    refused: float = 0.0  # the largest gain (nats) a safeguard kept out at the end (see ``refused_gain``)
    mean: Array | None = None  # the posterior mean m of the included functions, in the order of ``active``
    #: where the top-down re-estimations that went on on the whitened columns stopped: (basis indices, alpha,
    #: beta) each, for the caller to finish by moves on that factorisation (``regression._settle``): the steps'
    #: rank-one updates lose every digit of S_i and Q_i there, and from such a point fell 140-200 nats
    whitened_ends: tuple[tuple[Index, Array, float], ...] = ()


@dataclass
class _Pool:
    """The candidates' products: Phi_P^T Phi_P, Phi_P^T t, ||phi_i||^2."""

    index: Index  # basis indices of the pool members, (P,)
    gram: Array  # Phi_P^T Phi_P, (P, P)
    PhiTt: Array  # (P,)
    norms: Array  # ||phi_i||^2, (P,)


def _grown(buffer: Array, columns: int) -> Array:
    bigger = np.zeros((buffer.shape[0], columns), order="F")
    bigger[:, : buffer.shape[1]] = buffer
    return bigger


class _State:
    """Posterior over the active functions and S, Q over the pool (mutable, private)."""

    def __init__(self, pool: _Pool, tt: float, N: int, beta: float, opts: FastOptions) -> None:
        self.pool = pool
        self.tier_size, self.span_tol = TIER_SIZE, opts.span_tol
        self.tt = tt  # t^T t
        self.N = N
        self.beta = beta
        P = pool.index.size
        self.active = np.zeros(0, dtype=np.intp)  # positions in the pool
        self.alpha = np.zeros(0)
        self.buffer = np.zeros((P, min(FIRST_CAPACITY, P)), order="F")  # Phi_P^T Phi_a in its first M columns
        self.rows = np.arange(P)  # the tier: pool members whose S, Q the steps update
        self.tier = self.buffer  # Phi_T^T Phi_a: the tier's rows of ``buffer`` (the same array when T = P)
        self.work = np.empty(P)  # scratch of the compiled updates, (|T|,)
        self.Sigma = np.zeros((0, 0))
        self.m = np.zeros(0)
        self.S = np.zeros(pool.index.size)
        self.Q = np.zeros(pool.index.size)
        self.blocked = np.zeros(pool.index.size, dtype=bool)  # aligned with an included function
        self.included = np.zeros(pool.index.size, dtype=bool)  # the mask of ``active``

    def copy(self) -> "_State":
        """A copy whose arrays are its own; the pool (never modified) is shared."""
        twin = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                setattr(twin, name, value.copy(order="K"))
        if self.tier is self.buffer:
            twin.tier = twin.buffer
        return twin

    # ------------------------------------------------------------------ views
    @property
    def G(self) -> Array:
        """Phi_P^T Phi_a, (P, M): a column-major view of the buffer."""
        return self.buffer[:, : self.active.size]

    def reserve(self, M: int) -> None:
        """Room for M columns in the buffers (doubling, at most P)."""
        P, capacity = self.buffer.shape
        if M <= capacity:
            return
        columns = min(P, max(2 * capacity, M))
        whole = self.tier is self.buffer
        self.buffer = _grown(self.buffer, columns)
        self.tier = self.buffer if whole else _grown(self.tier, columns)

    def select_tier(self) -> None:
        """The tier: the excluded functions most likely to be added next.

        Run after S and Q of the whole pool are brought up to date
        (``refresh`` or ``reselect``): the excluded members are ranked by
        x = Q^2 / S (Result 7.18: added when x > 1) and the ``tier_size``
        best join (every one with x > 1 when there are more); on a small pool
        the tier is the whole pool. The steps update S and Q over the tier
        only, O(|T| M) each; the rest of the pool is brought up to date again
        every max(refresh_every, M) steps and before any convergence test.
        """
        P, M = self.pool.index.size, self.active.size
        if P <= M + 2 * self.tier_size:
            self.rows, self.tier = np.arange(P), self.buffer
        else:
            self.rows = tier_rows(self.S, self.Q, self.pool.norms, self.included, self.blocked, self.beta,
                                  self.span_tol, self.tier_size)
            self.tier = np.empty((self.rows.size, self.buffer.shape[1]), order="F")
            gather_rows(self.buffer, self.rows, M, self.tier)
        self.work = np.empty(self.rows.size)

    @property
    def b_a(self) -> Array:
        """Phi_a^T t, (M,)."""
        return self.pool.PhiTt[self.active]

    def data_misfit(self) -> float:
        """E_D = ||t - Phi_a m||^2 = t^T t - m^T Phi_a^T t - m^T A m / beta, in O(M).

        From t^T t - 2 m^T Phi_a^T t + m^T Phi_a^T Phi_a m and (7.82)-(7.83):
        beta Phi_a^T Phi_a m = beta Phi_a^T t - A m.
        """
        value = self.tt - float(self.m @ self.b_a) - float(np.sum(self.alpha * self.m**2)) / self.beta
        return max(value, 0.0)


@dataclass
class _Factor:
    """The posterior at one beta by its Cholesky factor: Sigma^-1 = A + beta Phi_a^T Phi_a = L L^T."""

    beta: float
    L: Array
    m: Array
    value: float  # the log evidence (*) of Result 7.13

    @cached_property
    def L_inv(self) -> Array:
        """L^-1 (LAPACK trtri): Sigma = L^-T L^-1, and phi^T Sigma phi = ||L^-1 phi||^2."""
        if self.L.shape[0] == 0:
            return np.zeros((0, 0))
        L_inv, info = scipy.linalg.lapack.dtrtri(self.L, lower=1)
        if info != 0:
            raise SolverError(f"LAPACK trtri failed with info={info}", status=f"trtri info={info}", solver="rvm")
        return L_inv  # lower triangular: L's strict upper triangle is zero and trtri leaves it


def _factorise(state: _State, beta: float) -> _Factor:
    """L, m and the log evidence (*) at ``beta``: one Cholesky factorisation, O(M^3 / 3)."""
    N = state.N
    if state.active.size == 0:
        value = 0.5 * (N * math.log(beta) - N * LOG_2PI - beta * state.tt)
        return _Factor(beta, np.zeros((0, 0)), np.zeros(0), value)
    try:
        L, m, value = posterior_factor(state.buffer, state.active, state.alpha, beta, state.pool.PhiTt,
                                       state.tt, float(N))  # (7.82)-(7.83), Result 7.13 (*)
    except np.linalg.LinAlgError as exc:
        raise not_positive_definite(state.active.size) from exc
    return _Factor(beta, L, m, value)


def _adopt(state: _State, factor: _Factor, whole: bool) -> float:
    """Take beta, Sigma, m from ``factor`` and recompute S, Q by (7.106)-(7.107); return the log evidence.

    Over the whole pool (``whole``, then the tier is chosen again) or over the
    tier only. With W = Phi^T Phi_a L^-T (a triangular multiply, M^2 flops a
    row), S_i = beta ||phi_i||^2 - beta^2 ||w_i||^2 and
    Q_i = beta phi_i^T t - beta g_i^T m.
    """
    beta, pool = factor.beta, state.pool
    state.beta, state.m = beta, factor.m
    state.Sigma = factor.L_inv.T @ factor.L_inv
    rows = np.arange(pool.index.size) if whole else state.rows
    G = state.G if whole else state.tier[:, : state.active.size]
    W = scipy.linalg.blas.dtrmm(1.0, factor.L_inv, G, side=1, lower=1, trans_a=1) if state.active.size else G
    factors_over_rows(W, G, factor.m, pool.norms, pool.PhiTt, rows, beta, state.S, state.Q)  # (7.106)-(7.107)
    if whole:
        state.select_tier()
    return factor.value


def reselect(state: _State) -> bool:
    """S, Q of the whole pool from the current Sigma and m, and the tier chosen again; False (and
    nothing changed) when no function is included or Sigma is not numerically positive definite.

    No refactorisation of Sigma^-1: with the Cholesky factor Sigma = R R^T
    (O(M^3 / 3)) and W = Phi_P^T Phi_a R (a triangular multiply),
    S_i = beta ||phi_i||^2 - beta^2 ||w_i||^2 and Q_i = beta phi_i^T t - beta g_i^T m (7.106)-(7.107).
    """
    if state.active.size == 0:
        return False
    R, info = scipy.linalg.lapack.dpotrf(state.Sigma, lower=1, clean=1)
    if info != 0:
        return False
    W = scipy.linalg.blas.dtrmm(1.0, R, state.G, side=1, lower=1)
    factors_over_rows(W, state.G, state.m, state.pool.norms, state.pool.PhiTt, np.arange(state.pool.index.size),
                      state.beta, state.S, state.Q)
    state.select_tier()
    return True


def refresh(state: _State) -> float:
    """Recompute Sigma, m and S, Q of the whole pool from a fresh factorisation; return the log evidence (*)."""
    return _adopt(state, _factorise(state, state.beta), whole=True)


def beta_proposals(state: _State, prior: Hyperprior) -> tuple[float, float]:
    """(7.88) (with Exercise 7.13's hyperprior) and the EM update of gap 7.6, from Sigma and m."""
    return _proposals(state, float(np.sum(1.0 - state.alpha * np.diag(state.Sigma))), prior)  # (7.89)


def _proposals(state: _State, sum_gamma: float, prior: Hyperprior) -> tuple[float, float]:
    """``beta_proposals`` given sum_i gamma_i (the misfit from the state's m, alpha and beta)."""
    N, beta = state.N, state.beta
    E_D = state.data_misfit()
    mackay = _ratio(N + 2.0 * (prior.a - 1.0) - sum_gamma, E_D + 2.0 * prior.b)  # (7.88), Ex. 7.13
    em = _ratio(N + 2.0 * (prior.a - 1.0), E_D + sum_gamma / beta + 2.0 * prior.b)  # gap 7.6
    return mackay, em


def _ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, inf for a perfect fit (denominator 0): beta_max then caps it."""
    return numerator / denominator if denominator > 0.0 else math.inf


def update_beta(state: _State, opts: FastOptions, value: float, whole: bool = False) -> float:
    """Re-estimate beta; never lowers the objective. Returns the log evidence after a refresh.

    The proposals come from the current Sigma and m; ``value`` is the log
    evidence there. The MacKay proposal (7.88) is tried first and kept if the
    objective (7.85) + ln Gam(beta | a, b) does not decrease; otherwise the EM
    step (which cannot decrease it); otherwise beta stays. Each trial costs
    one Cholesky factorisation; Sigma, S and Q are recomputed once, at the
    end, over the tier (during the steps) or the ``whole`` pool.
    """
    prior = opts.prior
    objective_old = value + prior.log_beta(state.beta)
    for beta in beta_proposals(state, prior):
        if beta == math.inf:  # no misfit left (t = Phi m, e.g. t = 0): the evidence rises up to the floor
            beta = opts.beta_max
        if not (math.isfinite(beta) and beta > 0.0):
            continue
        trial = _factorise(state, min(beta, opts.beta_max))
        if trial.value + prior.log_beta(trial.beta) >= objective_old - 1e-12 * abs(objective_old):
            return _adopt(state, trial, whole)
    return _adopt(state, _factorise(state, state.beta), whole)


def beta_moved(state: _State, opts: FastOptions) -> bool:
    """Whether (7.88) with the hyperprior, cheap from the updated Sigma and m, would move ln beta by more
    than beta_tol (the Gamma-hyperprior rule for step 8)."""
    mackay, _ = beta_proposals(state, opts.prior)
    return bool(moves_beta(mackay, state.beta, opts.beta_tol, opts.beta_max))


def beta_due(run: "_Run", opts: FastOptions, best_gain: float) -> bool:
    """Whether step 8 (beta) comes before the next alpha step, of gain ``best_gain`` (flat prior).

    Not right after a beta step, nor in the first ``beta_start`` steps; then
    ``beta_step_due``: when (7.88) would move ln beta by more than beta_tol
    and the move's estimated gain outweighs the alpha step's by the relative
    cost of a beta step.
    """
    state = run.state
    if not opts.update_beta or run.beta_fresh or run.iterations < opts.beta_start:
        return False
    return bool(beta_step_due(state.tt, state.pool.PhiTt, state.active, state.alpha, state.Sigma, state.m,
                              state.beta, state.N, opts.beta_tol, opts.beta_max, opts.beta_cost, best_gain))


@dataclass(frozen=True)
class _Step:
    position: int  # pool position
    alpha_new: float  # inf for a deletion
    gain: float  # of the objective the steps maximise: the evidence plus, if any, the alpha hyperprior
    evidence_gain: float | None = None  # of the log evidence (7.85) alone (7.97), when it differs from gain

    @property
    def evidence(self) -> float:
        """The change of the log evidence (7.85) the step makes."""
        return self.gain if self.evidence_gain is None else self.evidence_gain


NO_STEP = _Step(position=-1, alpha_new=math.inf, gain=-math.inf)


def best_step(state: _State, opts: FastOptions) -> _Step:
    """The single-alpha step of largest gain over the pool (Result 7.18): add, re-estimate or delete."""
    included = _best_included(state, opts)
    excluded = _best_excluded(state, opts)
    return included if included.gain >= excluded.gain else excluded


def _best_included(state: _State, opts: FastOptions) -> _Step:
    """Re-estimate (q^2 > s) or delete (q^2 <= s) an included function; gain lambda(new) - lambda(old).

    s_i, q_i come from Sigma and m (``included_sparsity_quality``) rather than
    from S_i, Q_i by (7.104)-(7.105), whose denominator alpha_i - S_i cancels
    catastrophically for well-determined weights. With a flat prior
    lambda(alpha*) = (x - 1 - ln x)/2, x = q^2/s (Result 7.18(c)).
    """
    if state.active.size == 0:
        return NO_STEP
    if not opts.prior.flat:
        s, q = included_sparsity_quality(state.alpha, state.Sigma, state.m)  # (7.104)-(7.105)
        return _best_included_general(state, s, q, opts)
    k, alpha_new, gain = best_included_flat(state.alpha, state.Sigma, state.m, opts.alpha_max)
    if k < 0:
        return NO_STEP
    return _Step(position=int(state.active[k]), alpha_new=float(alpha_new), gain=float(gain))


def _best_included_general(state: _State, s: Array, q: Array, opts: FastOptions) -> _Step:
    """As ``_best_included`` under a Gamma hyperprior on alpha."""
    a = state.alpha
    alpha_new = alpha_star(s, q, opts.prior)  # (7.101) with the hyperprior; inf: delete
    alpha_new[alpha_new > opts.alpha_max] = np.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = alpha_gain(a, alpha_new, s, q, opts.prior)  # (7.97) and the hyperprior
    gain[~np.isfinite(gain)] = -np.inf
    k = int(np.argmax(gain))
    with np.errstate(invalid="ignore", divide="ignore"):
        evidence = alpha_gain(a[k], alpha_new[k], s[k], q[k])  # (7.97)
    return _Step(position=int(state.active[k]), alpha_new=float(alpha_new[k]), gain=float(gain[k]),
                 evidence_gain=float(evidence))


def _best_excluded(state: _State, opts: FastOptions) -> _Step:
    """Add the excluded function of largest gain: for alpha = inf, s = S and q = Q.

    Flat prior: the gain (x - 1 - ln x)/2, x = q^2/s (Result 7.18(c)), grows
    with x, so the best addition has the largest x > 1 with
    alpha = s^2 / (q^2 - s) <= alpha_max. Functions numerically in the span of
    the included ones (S_i <= span_tol beta ||phi_i||^2) and copies of one
    (``blocked``) are left out.
    """
    S, Q = state.S, state.Q
    if opts.prior.flat:
        j, x = best_excluded_flat(S, Q, state.pool.norms, state.blocked, state.included, state.rows,
                                  state.beta, opts.span_tol, opts.alpha_max)
        if j < 0:
            return NO_STEP
        gain = 0.5 * (x - 1.0 - math.log(x))  # Result 7.18(c)
        return _Step(position=int(j), alpha_new=float(S[j] / (x - 1.0)), gain=gain)  # (7.101)
    out = np.zeros(S.size, dtype=bool)
    out[state.rows] = True  # the tier
    out &= ~state.included & ~state.blocked & (S > opts.span_tol * state.beta * state.pool.norms)
    return _best_excluded_general(state, out, opts)


def _best_excluded_general(state: _State, out: NDArray[np.bool_], opts: FastOptions) -> _Step:
    """As ``_best_excluded`` under a Gamma hyperprior on alpha (the cubic of ``alpha_star``)."""
    idx = np.flatnonzero(out)
    if idx.size == 0:
        return NO_STEP
    alpha_new = alpha_star(state.S[idx], state.Q[idx], opts.prior)
    alpha_new[alpha_new > opts.alpha_max] = np.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = alpha_gain(np.inf, alpha_new, state.S[idx], state.Q[idx], opts.prior)
    gain[~np.isfinite(alpha_new) | ~np.isfinite(gain)] = -np.inf
    k = int(np.argmax(gain))
    with np.errstate(invalid="ignore", divide="ignore"):
        evidence = alpha_gain(np.inf, alpha_new[k], state.S[idx[k]], state.Q[idx[k]])  # (7.97)
    return _Step(position=int(idx[k]), alpha_new=float(alpha_new[k]), gain=float(gain[k]),
                 evidence_gain=float(evidence))


def apply_step(state: _State, step: _Step) -> None:
    """Re-estimate, add or delete pool member ``step.position``."""
    where = np.flatnonzero(state.active == step.position)
    if where.size == 0:
        _add(state, step.position, step.alpha_new)
    elif math.isinf(step.alpha_new):
        _delete(state, int(where[0]))
    else:
        _reestimate(state, int(where[0]), step.alpha_new)
    symmetrize(state.Sigma)  # the compiled updates keep its lower triangle


def _shift(state: _State, k: int, kappa: float) -> None:
    """Sigma^-1 += (1/kappa - Sigma_kk)^-1 e_k e_k^T (Sherman-Morrison, gap 7.7), in place, with m, S, Q.

    ``shift`` updates the lower triangle of Sigma; the caller of a step symmetrizes it."""
    shift(state.Sigma, state.m, state.tier, state.rows, state.S, state.Q, k, kappa, state.beta, state.work)


def _reestimate(state: _State, k: int, alpha_new: float) -> None:
    delta = alpha_new - state.alpha[k]
    if delta != 0.0:
        _shift(state, k, 1.0 / (state.Sigma[k, k] + 1.0 / delta))  # kappa = 1/(Delta^-1 + Sigma_kk)
    state.alpha[k] = alpha_new


def _delete(state: _State, k: int) -> None:
    state.blocked[:] = False  # a blocked copy may be the better function now
    state.included[state.active[k]] = False
    state.Sigma, state.m, state.alpha, state.active = delete_function(
        state.buffer, state.tier, state.rows, state.Sigma, state.m, state.alpha, state.active, state.S, state.Q, k,
        state.beta, state.work)


def _add(state: _State, j: int, alpha: float) -> None:
    state.reserve(state.active.size + 1)
    state.Sigma, state.m = add_function(state.buffer, state.tier, state.rows, state.pool.gram, state.Sigma,
                                        state.m, state.S, state.Q, j, alpha, state.beta, state.work)
    state.active = np.append(state.active, j)
    state.alpha = np.append(state.alpha, alpha)
    state.included[j] = True


def _pool_from(
    design: Design, index: Index, PhiTt: Array, norms: Array, threads: int, old: _Pool | None = None
) -> _Pool:
    """The pool over ``index``; its Gram matrix reuses the entries ``old`` already holds."""
    with limit_blas(threads):
        return _pool_gram(design, index, PhiTt, norms, old)


def _pool_gram(design: Design, index: Index, PhiTt: Array, norms: Array, old: _Pool | None) -> _Pool:
    if old is None:
        gram = gram_matrix(design, index)
    else:
        kept = np.isin(index, old.index)
        where = np.searchsorted(old.index, index[kept])
        gram = np.empty((index.size, index.size))
        gram[np.ix_(kept, kept)] = old.gram[np.ix_(where, where)]
        fresh = ~kept
        # the new rows: the entrants' columns against the pool's (a stored Phi: over every column where the
        # pool holds at least a quarter of them, ``design.stored_project``; a kernel design: the pool's rows only)
        block = design.project(design.columns(index[fresh]), index).T
        gram[fresh] = block
        gram[:, fresh] = block.T
        # the entrants' own block came from a general product, whose two triangles differ by rounding
        # (5e-13 through ``Scaled``); ``posterior`` factorises one triangle: made exactly symmetric from
        # the upper one, so that which triangle a factorisation reads cannot change the fit
        f = np.flatnonzero(fresh)
        inner = gram[np.ix_(f, f)]
        gram[np.ix_(f, f)] = np.triu(inner) + np.triu(inner, 1).T
    return _Pool(index=index, gram=gram, PhiTt=PhiTt[index], norms=norms[index])


def _initial_pool(usable: Index, PhiTt: Array, norms: Array, size: int) -> Index:
    """``size`` usable functions: the best by q^2 / s = beta (phi^T t)^2 / ||phi||^2 and a spread.

    A ``POOL_BEST`` share goes to the functions best aligned with t; the rest
    is drawn evenly over the basis (a fixed-seed sample, so runs repeat), since
    the best-aligned functions of a smooth kernel are near copies of each other.
    """
    if usable.size <= size:
        return usable
    score = PhiTt[usable] ** 2 / norms[usable]
    best = usable[np.argsort(-score, kind="stable")[: int(POOL_BEST * size)]]
    rest = np.setdiff1d(usable, best)
    rng = np.random.default_rng(POOL_SEED)
    spread = rng.choice(rest, size=size - best.size, replace=False)
    return np.sort(np.concatenate([best, spread]))


class SweepCache:
    """phi_i^T phi_j for every usable function i and the included functions j seen by sweeps.

    A sweep needs Phi_out^T Phi_a; the columns for functions already included
    at an earlier sweep are kept, so each sweep computes only the columns of
    the functions included since (one blockwise pass over the kernel).
    """

    def __init__(self, usable: Index) -> None:
        self.rows = usable
        self.cols = np.zeros(0, dtype=np.intp)
        self.G = np.zeros((usable.size, 0))

    def products(self, design: Design, outside: Index, active: Index) -> Array:
        """Phi_out^T Phi_a, (len(outside), len(active)), columns in the order of ``active``."""
        missing = np.setdiff1d(active, self.cols)
        keep = np.isin(self.cols, active)
        self.cols, self.G = self.cols[keep], self.G[:, keep]
        if missing.size:
            fresh = design.project(design.columns(missing), self.rows)  # Phi^T Phi_missing
            self.cols = np.concatenate([self.cols, missing])
            self.G = np.column_stack([self.G, fresh])
        order = np.argsort(self.cols)
        column = order[np.searchsorted(self.cols, active, sorter=order)]
        return self.G[np.searchsorted(self.rows, outside)][:, column]


def sweep(design: Design, state: _State, outside: Index, PhiTt: Array, norms: Array,
          cache: SweepCache, threads: int, opts: FastOptions) -> tuple[Array, Array, NDArray[np.bool_]]:
    """S, Q (7.106)-(7.107) for the functions ``outside`` the pool, and which may be added.

    A function may be added unless it is numerically in the span of the
    included ones or (nearly) a copy of one, the same tests as inside the pool.
    """
    beta = state.beta
    if state.active.size == 0:
        S, Q = beta * norms[outside], beta * PhiTt[outside]
        return S, Q, S > opts.span_tol * beta * norms[outside]
    with limit_blas(threads):
        G_out = cache.products(design, outside, state.pool.index[state.active])  # Phi_out^T Phi_a
    S, Q = factors_from_posterior(G_out, PhiTt[outside], norms[outside], state.Sigma, state.m, beta)
    cosine = G_out / np.sqrt(np.outer(norms[outside], state.pool.norms[state.active]))
    eligible = (S > opts.span_tol * beta * norms[outside]) & (cosine.max(axis=1) <= opts.align_max)
    return S, Q, eligible


def _refill(design, state, entrants, entrant_score, PhiTt, norms, opts, threads) -> _State:
    """The pool with ``entrants`` brought in, evicting the idle members of lowest q^2 / s.

    A pool whose every place holds an included function grows by the
    entrants: else none could come in, and the run would stop with gains
    left outside (a pool of 100 on friedman1, N = 800, where the model keeps
    100 functions: 0.84 nats left).
    """
    pool = state.pool
    idle = np.setdiff1d(np.arange(pool.index.size), state.active)
    room = max(opts.pool_size - state.active.size, 0) or entrants.size
    entrants = entrants[np.argsort(-entrant_score, kind="stable")[:room]]
    stay = room - entrants.size
    idle_score = state.Q[idle] ** 2 / state.S[idle]
    kept_idle = pool.index[idle[np.argsort(-idle_score, kind="stable")[:stay]]]
    index = np.sort(np.concatenate([pool.index[state.active], kept_idle, entrants]))
    new = _State(_pool_from(design, index, PhiTt, norms, threads, old=pool), state.tt, state.N, state.beta, opts)
    new.active = np.searchsorted(index, pool.index[state.active])
    new.included[new.active] = True
    new.alpha = state.alpha.copy()
    new.reserve(new.active.size)
    new.buffer[:, : new.active.size] = new.pool.gram[:, new.active]
    return new


class Conjugate:
    """The Gaussian likelihood: B = beta I and t_hat = t do not move with w (Result 7.12).

    So each alpha step is a rank-one update of Sigma, m, S and Q (gap 7.7),
    taken by the compiled loop with a flat prior, and beta is re-estimated
    (step 8). The value tracked is the log evidence (7.85).
    """

    compiled = True

    def refresh(self, state: _State) -> float:
        """Sigma, m and S, Q of the whole pool from a fresh factorisation; the log evidence (*)."""
        return refresh(state)

    def take(self, run: "_Run", step: _Step, opts: FastOptions) -> None:
        """Steps 5-7 by rank-one updates, then step 8 when due under a hyperprior, or a periodic refresh."""
        state = run.state
        apply_step(state, step)  # steps 5-7 of Algorithm 7.2
        value = run.value + step.evidence  # the log evidence (7.85) is what is tracked and recorded
        run.since_refresh += 1
        run.beta_fresh = False
        beta_now = (not opts.prior.flat and opts.update_beta and run.iterations >= opts.beta_start
                    and beta_moved(state, opts))  # step 8 under a hyperprior: after a step that moves (7.88)
        run.record(update_beta(state, opts, value) if beta_now else value)
        if not beta_now and run.since_refresh >= max(opts.refresh_every, state.active.size):
            _periodic_refresh(run)


@dataclass
class _Run:
    """The mutable record of one run: state, tracked evidence and counters."""

    state: _State
    value: float
    history: list
    model: Conjugate = field(default_factory=Conjugate)
    iterations: int = 0
    sweeps: int = 0
    since_refresh: int = 0
    reselected: bool = False  # S, Q come from a reselect (the running Sigma), not from a fresh factor
    beta_fresh: bool = False  # beta was re-estimated and no alpha step taken since
    #: the top-down re-estimations that went on, past a failed Cholesky factor, on the whitened columns
    #: (``top_down_start``): (basis indices, alpha, beta) where they stopped, for ``FastOutcome.whitened_ends``
    whitened_ends: list = field(default_factory=list)

    def record(self, value: float) -> None:
        self.value = value
        self.history.append(value)


def _aligned(state: _State, j: int, opts: FastOptions) -> bool:
    """Whether excluded pool member j is (nearly) parallel to an included column (cosine > align_max).

    Two identical columns (duplicated training points) leave the evidence a
    function of 1/alpha_j + 1/alpha_k only; Tipping and Faul's alignment test
    keeps the second copy out.
    """
    if state.included[j]:
        return False
    return bool(aligned(state.buffer, state.active.size, j, state.pool.norms, state.active, opts.align_max))


def pool_step(run: _Run, opts: FastOptions) -> bool:
    """One step of Algorithm 7.2 over the pool; False when no step gains more than ``tol``.

    A step is one alpha move (steps 5-7) or, before it, the beta
    re-estimation (step 8) when that is due. The step is chosen here for
    every likelihood and taken by ``run.model`` (``Conjugate``: rank-one
    updates; other likelihoods run it on their whitened effective problem,
    see ``fast_laplace``). With a flat prior the steps are taken by the compiled ``pool_steps``, which
    makes the same choices and updates as the Python step below.
    """
    state = run.state
    if run.model.compiled and opts.prior.flat and compiled_steps(run, opts):
        return True
    step = best_step(state, opts)  # steps 3-4: s_i, q_i and the best single-alpha move (Result 7.18)
    if opts.prior.flat and beta_due(run, opts, step.gain):
        _beta_step(run, opts)
        return True
    if step.gain <= opts.tol:
        return False
    if _aligned(state, step.position, opts):
        state.blocked[step.position] = True  # a copy of an included function: never add it
        return True
    run.iterations += 1
    run.model.take(run, step, opts)  # steps 5-7 and what the likelihood needs after them
    return True


def _periodic_refresh(run: _Run) -> None:
    """The refresh due every max(refresh_every, M) steps: S, Q of the whole pool and a new tier.

    From the current Sigma and m (``reselect``); a fresh factorisation only
    when Sigma is no longer numerically positive definite. Fresh factors come
    with every beta step and before every convergence test.
    """
    run.since_refresh = 0
    run.reselected = reselect(run.state)
    if not run.reselected:
        run.value = refresh(run.state)
        run.history[-1] = run.value


def _beta_step(run: _Run, opts: FastOptions) -> None:
    """Step 8: re-estimate beta (over the tier; the whole-pool refresh stays due)."""
    run.iterations += 1
    run.record(update_beta(run.state, opts, run.value))
    run.beta_fresh = True


def compiled_steps(run: _Run, opts: FastOptions) -> bool:
    """Steps in compiled code until one needs Python; False if none was taken and none is due.

    Then the beta step or the refresh the loop stopped for is done here, as
    in ``pool_step``, or the buffer of G grows; the log evidence of every step
    is recorded.
    """
    state = run.state
    values = np.empty(STEP_BLOCK)
    check_beta_from = opts.beta_start if opts.update_beta else opts.max_iter + 1
    steps, state.Sigma, state.m, state.alpha, state.active, since_refresh, pending = pool_steps(
        state.buffer, state.tier, state.rows, np.ascontiguousarray(state.Sigma), state.m, state.alpha,
        state.active, state.S, state.Q, state.pool.gram, state.pool.norms, state.blocked, state.included,
        state.pool.PhiTt, state.tt, state.N, state.beta, run.value, opts.tol, opts.alpha_max, opts.span_tol,
        opts.align_max, opts.beta_tol, opts.beta_max, opts.beta_cost, check_beta_from, not run.beta_fresh,
        run.iterations, opts.max_iter, run.since_refresh, opts.refresh_every, values, state.work)
    if steps:
        run.iterations += steps
        run.since_refresh = since_refresh
        run.history.extend(values[:steps].tolist())
        run.value = float(values[steps - 1])
        run.beta_fresh = False
    if pending == 1:
        _beta_step(run, opts)
    elif pending == 2:
        _periodic_refresh(run)
    elif pending == 3:
        state.reserve(state.active.size + 1)
    return steps > 0 or pending in (1, 3)


def settle(run: _Run, opts: FastOptions) -> bool:
    """At a pool optimum: refresh the factors and re-estimate beta. True when steps remain."""
    state = run.state
    if run.since_refresh or run.reselected:  # confirm on a fresh factorisation
        run.value, run.since_refresh, run.reselected = run.model.refresh(state), 0, False
        run.history[-1] = run.value
        if best_step(state, opts).gain > opts.tol:
            return True
    if not opts.update_beta:
        return False
    beta_before = state.beta
    value = update_beta(state, opts, run.value, whole=True)
    if abs(math.log(state.beta / beta_before)) <= opts.beta_tol:
        # the state keeps the small move (update_beta adopted it): its (7.85) is the last entry, as after a
        # refresh, or the history ended at the old beta's value while the run returned the new beta (under a
        # Gamma prior on beta a first-order difference: the finish of an EM fit was judged to lower
        # (7.85) + ln Gam by 7.7e-5 nats where it raised it, and was dropped as unconverged)
        run.value = value
        if run.history:
            run.history[-1] = value
        return False
    run.iterations += 1
    run.record(value)
    return True


def sweep_and_refill(run: _Run, design: Design, cache: SweepCache, usable: Index, PhiTt: Array,
                     norms: Array, opts: FastOptions, threads: int) -> bool:
    """Sweep the functions outside the pool; refill it with those that gain more than ``sweep_tol``, or where
    none does, with those that gain more than ``tol``.

    ``sweep_tol`` alone (its default is 1e-3 N nats) left friedman1 at N = 5,000
    (standardised, gamma "scale") 208 nats below the maximum that the last
    refills reach, its run called converged with 3.7-nat additions outside the
    pool, and the final moves on the whitened posterior ran out of their
    budget after 18 s (each an orthogonal factorisation of N x M).
    """
    state = run.state
    outside = np.setdiff1d(usable, state.pool.index)
    S_out, Q_out, eligible = sweep(design, state, outside, PhiTt, norms, cache, threads, opts)
    run.sweeps += 1
    x = np.where(eligible, Q_out**2 / S_out, 0.0)
    gain = np.where(x > 1.0, 0.5 * (x - 1.0 - np.log(np.maximum(x, 1.0))), 0.0)  # Result 7.18(c)
    better = gain > max(opts.sweep_tol, opts.tol)
    if not np.any(better):
        better = gain > opts.tol  # nothing worth sweep_tol left: the last refill, of what gains more than tol
    if not np.any(better):
        return False
    run.state = _refill(design, state, outside[better], gain[better], PhiTt, norms, opts, threads)
    run.value = refresh(run.state)
    return True


@dataclass(frozen=True)
class _Basis:
    """What a run needs to reach every function: the design, its moments and the sweep cache."""

    design: Design
    usable: Index
    PhiTt: Array
    norms: Array
    cache: SweepCache
    threads: int
    t: Array  # the targets (solver units), for ``_recomputed``


def converge(run: _Run, basis: _Basis, opts: FastOptions, sweeps: bool = True) -> bool:
    """Steps (and sweeps) until no function gains more than the tolerances; False at max_iter.

    A refill that leads to no step ends the run too: the functions it brought
    in were not worth adding after all, and another sweep would find them again.
    """
    refilled_at = -1
    while run.iterations < opts.max_iter:
        if pool_step(run, opts) or settle(run, opts):
            continue
        if not sweeps or run.state.pool.index.size >= basis.usable.size or run.iterations == refilled_at:
            return True
        refilled_at = run.iterations
        if not sweep_and_refill(
            run, basis.design, basis.cache, basis.usable, basis.PhiTt, basis.norms, opts, basis.threads
        ):
            return True
    return False


def escape(run: _Run, basis: _Basis, opts: FastOptions) -> bool:
    """Try to leave a local maximum by lowering the noise; keep the result only if it is better.

    Single-alpha steps cannot make the joint move that a too-high noise
    estimate blocks (raise beta and add several functions at once). So beta
    is multiplied by ``restart_factor`` and held while the alpha steps
    converge, then re-estimated as before. The new maximum replaces the old
    one only when its log evidence is higher by more than ``tol``, and not
    when it is at the noise floor and the old one is not (``_floor_over_interior``); returns
    whether it did. Escapes work inside the pool (no sweeps), before the
    sweeps over the whole basis.
    """
    saved, value, iterations = run.state.copy(), run.value, run.iterations
    trial = _Run(state=run.state, value=run.value, history=[], iterations=run.iterations, sweeps=run.sweeps)
    trial.state.beta = min(trial.state.beta * opts.restart_factor, opts.beta_max)
    try:
        trial.value = refresh(trial.state)
        converge(trial, basis, replace(opts, update_beta=False, tol=HOLD_TOL * opts.tol), sweeps=False)
        ok = converge(trial, basis, opts, sweeps=False)
        if ok:
            _unrefused(trial, basis, opts)
    except SolverError:  # a precision that lost definiteness on the way: the escape is dropped
        ok = False
    run.iterations, run.sweeps = trial.iterations, trial.sweeps
    if ok and trial.value > value + opts.tol and not _floor_over_interior(trial.state, saved, opts):
        run.state = trial.state
        run.record(trial.value)
        return True
    run.state, run.value = saved, value
    run.iterations = max(run.iterations, iterations)
    return False


def refused_gain(state: _State, opts: FastOptions) -> float:
    """The largest gain (nats) of an excluded pool member that a safeguard keeps out (0.0 when none).

    The span test (S_i <= span_tol beta ||phi_i||^2) and the alignment test
    refuse additions that Result 7.18 would take (q^2 > s); a run that stops
    with such a gain above ``tol`` is not at a stationary point of the
    evidence. Read from S, Q of the whole pool (after a ``refresh``). Under Gam(alpha | c, d) the gain of
    the objective (7.97) + ln Gam(alpha_i | c, d) at its maximiser (``_refused_prior_gain``).
    """
    S, Q = state.S, state.Q
    out = ~state.included & (S > 0.0)
    refused = out & ((S <= opts.span_tol * state.beta * state.pool.norms) | state.blocked)
    if not np.any(refused):
        return 0.0
    if not opts.prior.flat:
        return _refused_prior_gain(S[refused], Q[refused], opts)
    x = Q[refused] ** 2 / S[refused]
    x = x[(x > 1.0) & ((x - 1.0) * opts.alpha_max > S[refused])]
    if x.size == 0:
        return 0.0
    return float(np.max(0.5 * (x - 1.0 - np.log(x))))  # Result 7.18(c)


def _refused_prior_gain(S: Array, Q: Array, opts: FastOptions) -> float:
    """The largest gain of adding one of the refused functions (S_i, Q_i) under Gam(alpha | c, d): the
    objective (7.97) + (c - 1) ln alpha_i - d alpha_i at its maximiser (``alpha_star``), as the certificate's
    add row (``certificate._prior_rows``). Returned as 0 before, so a fast fit with c > 1 whose span test
    refused a copy of a kept column (a rank-one linear kernel: 4.5 nats, from the prior term alone) was
    reported converged while its certificate failed."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        alpha_new = alpha_star(S, Q, opts.prior)
        usable = np.isfinite(alpha_new) & (alpha_new <= opts.alpha_max)
        if not np.any(usable):
            return 0.0
        gain = alpha_gain(np.full(int(np.sum(usable)), np.inf), alpha_new[usable], S[usable], Q[usable], opts.prior)
    gain = gain[np.isfinite(gain)]
    return float(np.max(gain, initial=0.0))


def _start_at(state: _State, positions: Index, alpha: Array) -> float:
    """Include pool members ``positions`` with precisions ``alpha`` (a warm start); the log evidence (*)."""
    state.active = np.asarray(positions, dtype=np.intp).copy()
    state.alpha = np.asarray(alpha, dtype=np.float64).copy()
    state.included[:] = False
    state.included[state.active] = True
    state.blocked[:] = False
    state.reserve(state.active.size)
    state.buffer[:, : state.active.size] = state.pool.gram[:, state.active]
    return refresh(state)


def mackay_polish(run: _Run, opts: FastOptions, sweeps: int) -> bool:
    """Joint re-estimation of every kept alpha_i and beta by (7.87)-(7.88), kept while the evidence rises.

    Single-alpha steps and the beta step are coordinate moves; a MacKay sweep
    moves all hyperparameters at once, which can leave a ridge where the
    coordinate moves crawl. Each sweep is one Cholesky factorisation of the
    kept M x M system and its triangular inverse (diag Sigma for (7.89));
    alphas beyond ``alpha_max`` are held at it (the next single-alpha steps
    delete them). S and Q over the pool, which the sweeps do not read, are
    recomputed once, from the last sweep kept. Returns whether any sweep was kept.
    """
    state = run.state
    if state.active.size == 0:
        return False
    Sigma_diag, kept = np.diag(state.Sigma), None
    alpha_kept, beta_kept, m_kept = state.alpha, state.beta, state.m
    for _ in range(sweeps):
        gamma = 1.0 - state.alpha * Sigma_diag  # (7.89)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha_new = np.where(state.m != 0.0, gamma / state.m**2, opts.alpha_max)  # (7.87)
        alpha_new = np.clip(np.nan_to_num(alpha_new, nan=opts.alpha_max, posinf=opts.alpha_max),
                            1e-12, opts.alpha_max)
        beta_new = state.beta
        if opts.update_beta:
            beta_new, _ = _proposals(state, float(gamma.sum()), opts.prior)  # (7.88)
            beta_new = min(beta_new, opts.beta_max) if math.isfinite(beta_new) and beta_new > 0 else state.beta
        state.alpha = alpha_new
        try:
            trial = _factorise(state, beta_new)
            accepted = trial.value > run.value + opts.tol
            if accepted:
                Sigma_diag = np.einsum("ij,ij->j", trial.L_inv, trial.L_inv)  # Sigma = L^-T L^-1
        except SolverError:
            accepted = False
        if not accepted:
            break
        kept, alpha_kept = trial, alpha_new
        state.beta, state.m = trial.beta, trial.m  # what the next sweep reads (Sigma: its diagonal above)
        run.iterations += 1
        run.record(trial.value)
        run.since_refresh, run.reselected, run.beta_fresh = 0, False, False
    state.alpha = alpha_kept
    if kept is None:
        state.beta, state.m = beta_kept, m_kept
        return False
    _adopt(state, kept, whole=True)
    return True


def held_start(run: _Run, basis: _Basis, opts: FastOptions, beta_hold: float) -> tuple[_Run, bool]:
    """Another start from the empty model: beta held at ``beta_hold`` while the alpha steps converge,
    then re-estimated only at each alpha optimum, then as usual, and the steps its span test refused
    (``_unrefused``). Returns the run and whether it converged."""
    state = _State(run.state.pool, run.state.tt, run.state.N, beta_hold, opts)
    try:
        trial = _Run(state=state, value=refresh(state), history=[], sweeps=run.sweeps)  # its own max_iter budget
        converge(trial, basis, replace(opts, update_beta=False, tol=HOLD_TOL * opts.tol), sweeps=False)
        if HELD_MIDDLE:
            converge(trial, basis, replace(opts, beta_start=opts.max_iter, tol=HELD_MIDDLE * opts.tol), sweeps=False)
        ok = converge(trial, basis, opts, sweeps=False)
        if ok:
            _unrefused(trial, basis, opts)
    except SolverError:  # a precision that lost definiteness on the way: the start is dropped
        return run, False
    return trial, ok


def withheld_start(run: _Run, basis: _Basis, opts: FastOptions, beta_hold: float,
                   withheld: Index) -> tuple[_Run, bool]:
    """A held start (``held_start``) with the ``withheld`` basis functions (the bias column) out of its pool
    and basis until its steps converge; then they are offered like every other function, and the steps and the
    polish run over the whole pool, and the steps its span test refused (``_unrefused``, which may sweep the
    basis). Returns the run
    and whether it converged (the run itself and False when the pool holds none of ``withheld``).

    A kernel wide enough to nearly span the constant makes the bias and the
    kernel columns rivals for the mean of t. Steps that take the bias among
    their first functions keep it, and stop in that basin; steps without it
    spread kernel functions over the inputs, a model the bias may join later.
    The two reach different maxima and neither is always the higher. The
    held start is the one run again because it depends on its first functions
    most: on a friedman3 draw of benchmarks/rvm_fuzz.py (seed 4, raw inputs,
    gamma 0.3 / (D var X)) it ended 33 nats higher (solver units) without the
    bias, and the fit 25 nats higher (7.25 against -17.73), where no top-down
    start came near. Over the regression cells of benchmarks/rvm_accuracy.py
    (3 widths, raw and standardised inputs) 6 of 37 fits rose, by up to 9.4
    nats (Boston housing, raw inputs, ten times "scale"; 5.0 in the
    benchmark's own process: that cell's maxima move with the last bits of
    K), none fell, for 9% more time; over rvm_fuzz.py's draws of seeds 4 and 5 (112 cells) 9 rose
    and 2 fell by 0.67 nats (a sparser maximum kept within ``TOP_DOWN_GAIN``).
    """
    pool = run.state.pool
    keep = ~np.isin(pool.index, withheld)
    if keep.all():
        return run, False
    narrow = _Pool(pool.index[keep], pool.gram[np.ix_(keep, keep)], pool.PhiTt[keep], pool.norms[keep])
    usable = np.setdiff1d(basis.usable, withheld)
    without = _Basis(basis.design, usable, basis.PhiTt, basis.norms, SweepCache(usable), basis.threads, basis.t)
    empty = _Run(state=_State(narrow, run.state.tt, run.state.N, beta_hold, opts), value=run.value, history=[],
                 sweeps=run.sweeps)
    held, ok = held_start(empty, without, opts, beta_hold)
    if not ok:
        return run, False
    # the held stages' own pool, the withheld members back: their ``_unrefused`` (``_span_retry``) sweeps
    # ``without`` and may refill it, and their positions index that pool, not ``narrow`` (mapped through
    # ``keep`` they named other functions, or none: an IndexError); so found by basis index
    members = held.state.pool.index
    index = np.union1d(members, pool.index[~keep])
    whole = pool if np.array_equal(index, pool.index) else _pool_from(
        basis.design, index, basis.PhiTt, basis.norms, basis.threads, old=pool)
    state = _State(whole, run.state.tt, run.state.N, held.state.beta, opts)
    try:
        value = _start_at(state, np.searchsorted(index, members[held.state.active]), held.state.alpha)
        trial = _Run(state=state, value=value, history=[], iterations=held.iterations, sweeps=held.sweeps)
        ok = converge(trial, basis, opts, sweeps=False) and _polished(trial, basis, opts)
        if ok:
            _unrefused(trial, basis, opts)
    except SolverError:  # a precision that lost definiteness once they were offered: the start is dropped
        return run, False
    return trial, ok


def top_down_start(run: _Run, basis: _Basis, opts: FastOptions, beta: float,
                   alpha_init: float | Array, method: str = "mackay", hold_beta: bool = False) -> tuple[_Run, bool]:
    """A start from the other end: every pool member included with alpha_i = ``alpha_init`` (one value,
    or one per column of the design).

    MacKay's joint re-estimation (7.87)-(7.88) (or EM's, ``method="em"``) over the pool's Gram matrix
    (held already; no kernel evaluation; with ``hold_beta``, beta held until the alphas settle,
    ``IterativeOptions.hold_beta``) runs as ``method="mackay"`` (``"em"``) does, to
    the same ``tol`` but no tighter than ``TOP_DOWN_TOL``; copies of one column are merged (``_merge_copies``);
    then the single-alpha steps converge from that point. The evidence of
    wide kernels has several maxima, and the steps from the empty model and
    MacKay's updates from the full one reach different ones; neither
    dominates (issue 16's matrix). Then the steps its span test refused
    (``_unrefused``). Returns the run and whether it converged. Where an update
    does not factor, the re-estimation goes on on the whitened columns
    (``reestimation.Whitening``) and its end is recorded in ``run.whitened_ends``
    for the caller's moves on that factorisation; the steps start from the
    last state that factored (and none where the start itself did not).
    """
    state = run.state
    pool = state.pool
    if np.ndim(alpha_init):
        alpha_init = np.asarray(alpha_init)[pool.index]
    wide = basis.usable.size > TOP_DOWN_SIZE
    iterative = IterativeOptions(method, max(opts.tol, TOP_DOWN_TOL), DEFAULT_MAX_ITER[method], opts.alpha_max,
                                 opts.beta_max, alpha_init, opts.prior,
                                 hopeless_ratio=TOP_DOWN_WIDE_HOPELESS if wide else 0.0, hold_beta=hold_beta)
    try:
        # one BLAS thread, as the steps: a threaded Cholesky rounds otherwise, and on a wide kernel's
        # several maxima the steps from the start went elsewhere (friedman1, N = 1,000, raw inputs, gamma
        # 0.1: 7.4 nats lower with two threads than with one); two threads gave the fit no speed
        # (0.67-0.72 s against 0.50 s with one, friedman1 N = 1,000, gamma 0.5, two cores)
        with limit_blas(1):
            out = iterative_regression(pool.gram, pool.PhiTt, state.tt, state.N, beta, iterative,
                                       whitening=Whitening(lambda at: basis.design.columns(pool.index[at]), basis.t))
        # where it went on on the whitened columns: finished by the caller on the orthogonal factorisation
        end = out.whitened_end if out.factored else (out.active, out.alpha, out.beta)
        if end is not None and end[0].size:
            run.whitened_ends.append((pool.index[end[0]], end[1].copy(), end[2]))
        if not out.factored:                 # no state that factored for the steps to start from
            return run, False
        active, alpha = _merge_copies(pool, out.active, out.alpha, opts.align_max)
        fresh = _State(pool, state.tt, state.N, out.beta, opts)
        value = _start_at(fresh, active, alpha)
    except SolverError:  # a weak prior on nearly collinear columns: the precision lost definiteness
        return run, False
    trial = _Run(state=fresh, value=value, history=[], iterations=run.iterations, sweeps=run.sweeps)
    try:
        ok = converge(trial, basis, opts, sweeps=False) and _polished(trial, basis, opts)
        if ok:
            _unrefused(trial, basis, opts)
    except SolverError:  # the steps from there met a precision that lost definiteness: the start is dropped
        return run, False
    return trial, ok


def _polished(run: _Run, basis: _Basis, opts: FastOptions) -> bool:
    """``mackay_polish`` and, if it moved, the steps again (over the pool); whether they converged.

    Applied to every start before starts are compared: on a ridge toward the
    noise floor the single-alpha steps stop early and the joint moves climb
    on, so a start is judged where both have stopped.
    """
    if opts.polish_sweeps and mackay_polish(run, opts, opts.polish_sweeps):
        return converge(run, basis, opts, sweeps=False)
    return True


def _merge_copies(pool: _Pool, active: Index, alpha: Array, align_max: float) -> tuple[Index, Array]:
    """One function for each set of (numerically) identical included columns (cosine > ``align_max``).

    For two copies of one column the evidence depends on 1/alpha_j + 1/alpha_k
    only (the prior variance of their common weight), so keeping the first
    with 1/alpha = 1/alpha_j + 1/alpha_k leaves it unchanged; the single-alpha
    steps could not merge them (each deletion alone loses), and the fast
    method keeps one copy of a function (``_aligned``).
    """
    if active.size < 2:
        return active, alpha
    norms = np.sqrt(pool.norms[active])
    cosine = pool.gram[np.ix_(active, active)] / np.outer(norms, norms)
    variance = 1.0 / alpha
    keep = np.ones(active.size, dtype=bool)
    for j in range(active.size):
        if not keep[j]:
            continue
        copies = np.flatnonzero(keep & (cosine[j] > align_max))
        copies = copies[copies != j]
        variance[j] += variance[copies].sum()
        keep[copies] = False
    return active[keep], 1.0 / variance[keep]


def _at_floor(state: _State, opts: FastOptions) -> bool:
    """Whether beta sits at its bound ``beta_max`` (the noise floor)."""
    return state.beta >= opts.beta_max * (1.0 - 1e-9)


def _floor_over_interior(trial: _State, incumbent: _State, opts: FastOptions) -> bool:
    """Whether another start's result is at the noise floor where the result it would replace is not:
    it never replaces it (``_chosen_start``; the escapes and the held starts alike)."""
    return _at_floor(trial, opts) and not _at_floor(incumbent, opts)


def _chosen_start(run: _Run, trials: list[_Run], opts: FastOptions, basis: _Basis) -> _Run:
    """The run or one of the top-down starts' results (``trials``): by (7.85), recomputed for each
    (``posterior.Whitened``) with its rounding, among the run and the trials above it by more than
    ``tol`` (beyond both roundings, so that the evidence history never falls), the sparsest within
    ``TOP_DOWN_GAIN`` of the highest (``sparsest_near_best``); never a result at the noise floor where
    the run is not.

    With about as many functions as data the evidence can keep rising as the
    noise shrinks, the weights taking over the whole of t; a start from many
    functions may climb that ridge to the floor (``beta_max``) instead of
    stopping at a maximum of (7.85) at some noise. The floor is a bound of the
    solver, not a stationary point, and its noise estimate (1e-3 std(t) by
    default) is no estimate, so an interior maximum is kept over it.

    A start from a weak prior can end with large weights on nearly collinear
    columns, where A + beta Phi^T Phi (the steps' factor) has no digits left
    and the steps' tracked evidence drifts from the true one (0.4 nats on
    friedman3 with raw inputs, 3.8 on friedman2), so starts are compared by
    (7.85) itself, from an orthogonal factorisation of the whitened kept
    columns, which those weights cost no digits. (Formed, C lost up to 18
    nats there: friedman2 with raw inputs, from alpha = 1e-6, ended at
    cond(C) = 5e15.)

    All results are compared at once: one at a time, each against the one kept so far, the choice
    depended on the starts' order (sinc, N = 120, gamma 0.5: the 18-function maximum of MacKay's start,
    1.2 nats above the 5 functions of the steps from the empty model, was kept over the 4 of EM's start
    at 0.01 nats below it).
    """
    trials = [trial for trial in trials
              if trial.value > run.value + opts.tol and not _floor_over_interior(trial.state, run.state, opts)]
    if not trials:
        return run
    (incumbent, incumbent_rounding), above = _recomputed(run, basis), []
    for trial in trials:
        value, rounding = _recomputed(trial, basis)
        if value - rounding > incumbent + incumbent_rounding + opts.tol:        # a gain of more than tol
            above.append((trial, value, rounding))
    candidates = [run] + [trial for trial, _, _ in above]
    recomputed = np.array([(incumbent, incumbent_rounding)] + [(value, rounding) for _, value, rounding in above])
    sizes = np.array([c.state.active.size for c in candidates])
    return candidates[sparsest_near_best(recomputed[:, 0], sizes, recomputed[:, 1])]


def _recomputed(run: _Run, basis: _Basis) -> tuple[float, float]:
    """(7.85) at the run's state, recomputed from an orthogonal factorisation of the kept columns
    (``posterior.Whitened``), and its rounding estimate; the tracked value (with no rounding) for the
    empty model, exact there."""
    state = run.state
    if state.active.size == 0:
        return run.value, 0.0
    Phi_a = basis.design.columns(state.pool.index[state.active])
    post = whitened_posterior(Phi_a, basis.t, state.alpha, state.beta)
    return post.evidence, post.rounding


def sparsest_near_best(values: Array, sizes: Index, roundings: Array | None = None) -> int:
    """The position of the maximum kept among several starts' (evidence ``values``, ``sizes`` functions,
    each value known to within its ``rounding``): the sparsest whose value is within ``TOP_DOWN_GAIN``
    nats of the highest (beyond both roundings); among equally sparse ones the highest, the first on a tie.

    A denser maximum is kept only where it is more than ``TOP_DOWN_GAIN`` above every sparser one, as
    ``worth_replacing`` decides between two; over several, pair by pair in turn, that rule is not
    transitive, and the choice depended on their order.
    """
    values = np.asarray(values, dtype=np.float64)
    roundings = np.zeros_like(values) if roundings is None else np.asarray(roundings, dtype=np.float64)
    sizes = np.asarray(sizes)
    surely = values - roundings
    near = np.flatnonzero(values + roundings >= surely.max() - TOP_DOWN_GAIN)
    sparsest = near[sizes[near] == sizes[near].min()]
    return int(sparsest[np.argmax(surely[sparsest])])


def worth_replacing(value: float, size: int, incumbent: float, incumbent_size: int, tol: float) -> bool:
    """Whether a top-down start's maximum (``value``, ``size`` functions) replaces the incumbent's.

    Higher by more than ``tol`` when it keeps no more functions; by more than
    ``TOP_DOWN_GAIN`` nats when it keeps more: a start from every function
    tends to end with many weakly relevant ones worth hundredths of a nat
    together (Poisson counts: 36 functions for 0.006 nats over 5), and the
    sparser maximum is the RVM's answer unless the denser one is clearly
    more probable.
    """
    return value > incumbent + (TOP_DOWN_GAIN if size > incumbent_size else tol)


def fast_regression(
    design: Design, t: Array, PhiTt: Array, norms: Array, usable: Index, beta: float, opts: FastOptions,
    start: tuple[Index, Array] | None = None, withheld: Index | None = None,
) -> FastOutcome:
    """Run Algorithm 7.2 over the usable columns of ``design`` (solver units), with ``escape`` restarts,
    ``held_start`` starts (and ``withheld_start`` ones, with the basis indices ``withheld`` out of their pool
    until they converge: the bias column), a ``mackay_polish`` and the ``_span_retry`` check; or, given ``start``
    (basis indices and their alphas, e.g. MacKay's result), the steps from that point.

    The steps work on matrices of size M and P and run with one BLAS thread
    (several threads only contend on such sizes); sweeps and refills, which
    multiply N x N blocks, use the threads BLAS had on entry.
    """
    size = min(opts.pool_size, usable.size)
    threads = blas_threads()
    index = _initial_pool(usable, PhiTt, norms, size)
    if start is not None:
        index = np.union1d(index, start[0])
    pool = _pool_from(design, index, PhiTt, norms, threads)
    state = _State(pool, float(t @ t), t.shape[0], beta, opts)
    value = refresh(state) if start is None else _start_at(state, np.searchsorted(index, start[0]), start[1])
    run = _Run(state=state, value=value, history=[value])
    basis = _Basis(design, usable, PhiTt, norms, SweepCache(usable), threads, t)
    with limit_blas(1):
        try:
            converged, lost = converge(run, basis, opts, sweeps=False), None  # the pool first ...
        except SolverError as exc:
            # the steps from the empty model met a precision that lost definiteness (nearly collinear columns:
            # a constant input, targets 354.76 +- 1e-7): that start is dropped, as a held or top-down start
            # that meets one is, and the fit goes on from those starts; with none of them the error stands
            if not opts.restarts:
                raise
            converged, lost, run.value = False, exc, -math.inf
            run.history.clear()     # its tracked values had lost their digits: the evidence of no state returned
        if converged and opts.restarts:
            _unrefused(run, basis, opts)
        for _ in range(opts.restarts if (opts.update_beta and converged) else 0):
            before = run.value
            if not escape(run, basis, opts) or run.value - before < opts.restart_gain:
                break
        factors = HOLD_FACTORS if opts.hold_factors is None else opts.hold_factors
        held = [(held_start, ())]
        if withheld is not None and withheld.size and usable.size <= WITHHELD_SIZE:
            held.append((withheld_start, (withheld,)))
        for factor in (factors if opts.restarts and opts.update_beta and opts.prior.flat else ()):
            for start_from, args in held:
                trial, ok = start_from(run, basis, opts, min(beta * factor, opts.beta_max), *args)
                if ok and trial.value > run.value + opts.tol and (
                        lost is not None or not _floor_over_interior(trial.state, run.state, opts)):
                    run.state, run.iterations, converged, lost = trial.state, trial.iterations, True, None
                    run.record(trial.value)
        if converged and opts.restarts and opts.prior.flat:
            converged = _polished(run, basis, opts)
        starts = _top_down_starts(usable.size, opts)
        if starts and converged:
            _unrefused(run, basis, opts)
        trials = [trial for trial, ok in (top_down_start(run, basis, opts, beta, alpha_init, method, hold_beta)
                                          for method, alpha_init, hold_beta in starts) if ok]
        if lost is not None and not trials:     # no start of the run's own, and no top-down one: the error
            raise lost
        chosen = _chosen_start(trials[0], trials[1:], opts, basis) if lost is not None else \
            _chosen_start(run, trials, opts, basis)
        if chosen is not run:
            run.state, run.iterations, converged = chosen.state, chosen.iterations, True
            run.record(chosen.value)
        if converged:
            converged = converge(run, basis, opts)  # ... then the whole basis, by sweeps
        if converged and refused_gain(run.state, opts) > opts.tol:
            opts = _span_retry(run, basis, opts)
        refused = refused_gain(run.state, opts)
    return _outcome(run, converged and refused <= opts.tol, refused)


def _top_down_starts(size: int, opts: FastOptions) -> tuple[tuple[str, float | Array, bool], ...]:
    """The top-down starts (re-estimation method, alpha_i, beta held) on a basis of ``size`` functions: MacKay's
    from all of TOP_DOWN_REGRESSION_ALPHAS and ``opts.raw_starts`` (one alpha_i per column of the design), EM's
    from TOP_DOWN_EM_ALPHAS and, beta held, from TOP_DOWN_HELD_EM_ALPHAS, and MacKay's, beta held, from
    TOP_DOWN_HELD_MACKAY_ALPHAS and ``opts.centred_starts`` up to TOP_DOWN_SIZE, MacKay's from
    TOP_DOWN_WIDE_ALPHA alone up to TOP_DOWN_WIDE_SIZE, none above (nor without restarts, with beta held, or
    under a prior that is not flat)."""
    if not (opts.restarts and opts.update_beta and opts.prior.flat):
        return ()
    if size <= TOP_DOWN_SIZE:
        alphas = TOP_DOWN_REGRESSION_ALPHAS + opts.raw_starts
        return (tuple(("mackay", a, False) for a in alphas) + tuple(("em", a, False) for a in TOP_DOWN_EM_ALPHAS)
                + tuple(("em", a, True) for a in TOP_DOWN_HELD_EM_ALPHAS)
                + tuple(("mackay", a, True) for a in TOP_DOWN_HELD_MACKAY_ALPHAS + opts.centred_starts))
    return (("mackay", TOP_DOWN_WIDE_ALPHA, False),) if size <= TOP_DOWN_WIDE_SIZE else ()


def _unrefused(run: _Run, basis: _Basis, opts: FastOptions) -> None:
    """Before starts are compared (the escapes, the held and the top-down starts, and the run they would
    replace): the steps that the span and alignment tests refused, where they would gain more than ``tol``
    (``_span_retry``), so that each start is judged at the maximum it leads to.

    Judged with the refusals in place, a start can win that ends lower: on
    friedman1 (N = 1,000, raw inputs, gamma 0.05) the start from the empty
    model stood 221 nats below the top-down one with 1-2 hundred nats of
    refused gains, and reached 20 nats above it once they were taken; on
    friedman3 (N = 220, raw, gamma 0.03 / (D var X), a fuzzed draw) the held
    start replaced a run that the refused steps would have taken 1.6 nats
    higher.
    """
    if refused_gain(run.state, opts) > opts.tol:
        _span_retry(run, basis, opts)


def _span_retry(run: _Run, basis: _Basis, opts: FastOptions) -> FastOptions:
    """Steps again with the span and alignment tests at ``SPAN_RETRY``, ``ALIGN_RETRY``: the gains they
    refused, if a fresh factor confirms them (flat prior).

    Kept (and the options it ran with returned) only when the run converges
    within its own budget of steps (``SPAN_RETRY_STEPS``), every factorisation
    stays positive definite and the log evidence on a fresh Cholesky factor is
    higher; otherwise the run is left as it was.
    """
    budget = max(SPAN_RETRY_MIN_STEPS, SPAN_RETRY_STEPS * run.state.pool.index.size)
    loose = replace(opts, span_tol=SPAN_RETRY, align_max=max(opts.align_max, ALIGN_RETRY),
                    max_iter=min(opts.max_iter, run.iterations + budget))
    trial = _Run(state=run.state.copy(), value=run.value, history=[], iterations=run.iterations,
                 sweeps=run.sweeps)
    trial.state.blocked[:] = False
    trial.state.span_tol = loose.span_tol  # the tier is chosen by the state's test: the refused may join it
    trial.state.select_tier()
    try:
        ok = converge(trial, basis, loose)
        value = refresh(trial.state)
    except SolverError:
        return opts
    run.sweeps = trial.sweeps
    if not (ok and math.isfinite(value) and value > run.value + opts.tol):
        return opts
    run.iterations = trial.iterations
    run.state = trial.state
    run.history.extend(trial.history)
    run.record(value)
    return replace(loose, max_iter=opts.max_iter)


@dataclass(frozen=True)
class _Linearised:
    """One state of ``fast_laplace``: the included pairs, their alpha, the Laplace mode and its evidence."""

    active: Index  # pair indices i O + k
    alpha: Array
    mode: Laplace
    value: float  # the Laplace log evidence (7.114)


def _linearise(likelihood: Likelihood, Phi: Array, T: Array, active: Index, alpha: Array, w0: Array,
               mode_opts: ModeOptions) -> _Linearised:
    """The Laplace mode, Newton from ``w0`` (the effective problem's posterior mean: one Newton step at the
    previous curvature), and its evidence (7.114)."""
    O = T.shape[1]
    basis, output = np.divmod(active, O)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            mode = find_mode(likelihood, Phi, basis, output, T, alpha, w0, mode_opts)  # (7.109)-(7.113)
    except SolverError:  # a block so long that its alphas leave no positive definite Hessian: rejected
        return _Linearised(active, alpha, None, -math.inf)  # type: ignore[arg-type]
    value = laplace_log_evidence(mode, alpha)  # (7.114)
    return _Linearised(active, alpha, mode, value if math.isfinite(value) else -math.inf)


@dataclass(frozen=True)
class _Whitened:
    """The effective problem at one mode as a regression at beta = 1 (``whitened_problem``) and its moments.

    ``residual_products`` is Phi^T (t - y) per pair: Q_j of an excluded pair
    at the mode (``laplace.effective_problem``); taken in the same pass over
    Phi as Phi_w^T t_w for one output.
    """

    design: Design
    t: Array
    PhiTt: Array
    norms: Array
    residual_products: Array


def _whiten(likelihood: Likelihood, Phi: Array, squares: Array, T: Array, at: _Linearised) -> _Whitened:
    """B^(1/2) Phi, B^(1/2) t_hat at the mode of ``at`` (7.117)-(7.119), with Phi_w^T t_w, ||phi_w||^2, Phi^T (t - y)."""
    basis, output = np.divmod(at.active, T.shape[1])
    Phi_w, t_w, root = whitened_problem(likelihood, Phi, basis, output, T, at.mode)
    r = likelihood.residual(T, at.mode.Y)
    if Phi_w is None:  # one output: diag(sqrt(b)) Phi, never formed; one pass for both products
        b_root = root[:, 0, 0]
        design: Design = WeightedDesign(Phi, b_root, squares)
        both = transposed_product(Phi, np.column_stack([b_root * t_w, r[:, 0]]))
        return _Whitened(design, t_w, both[:, 0], squares.T @ (b_root * b_root), both[:, 1])
    design = DenseDesign(Phi_w)
    PhiTt, norms = design.moments(t_w)
    return _Whitened(design, t_w, PhiTt, norms, (Phi.T @ r).ravel())


def _effective_run(eff: _Whitened, at: _Linearised, opts: FastOptions, pool: Index | None) -> FastOutcome:
    """Algorithm 7.2 of the regression (pool, compiled loops, sweeps) on the effective problem ``eff`` at ``at``.

    The effective problem (7.117)-(7.119) held fixed at the mode of ``at``:
    beta = 1 on the whitened columns B^(1/2) Phi and targets B^(1/2) t_hat
    (``_whiten``), started from the pairs and alphas of ``at``. With
    ``pool`` (pair indices) the run is restricted to those pairs and the
    included ones (no sweep); without, it reaches every pair, by sweeps.
    """
    norms = eff.norms
    usable = np.flatnonzero(norms > 0.0) if pool is None else pool[norms[pool] > 0.0]
    start = None
    if at.active.size:
        order = np.argsort(at.active)
        start = (at.active[order], at.alpha[order])
        usable = np.union1d(usable, start[0])
    if pool is not None:
        opts = replace(opts, pool_size=usable.size)
    return fast_regression(eff.design, eff.t, eff.PhiTt, norms, usable, 1.0, opts, start=start)


def _block_pool(eff: _Whitened, at: _Linearised, size: int, rng: np.random.Generator) -> Index | None:
    """The candidates of a block without sweeps, ``size`` pairs (None when every pair fits).

    Half are the excluded pairs of largest Q_j^2 / (phi_j^T B phi_j): at the
    mode Q_j = phi_i^T (t_k - y_k) exactly (``laplace.effective_problem``) and
    S_j <= phi_j^T B phi_j, so this is a lower bound on x_j = Q_j^2 / S_j
    (Result 7.18), from products the block computes anyway; the rest are
    drawn afresh each block from the others.
    """
    n_pairs = eff.norms.size
    if n_pairs <= size:
        return None
    Q, norms = eff.residual_products, eff.norms
    score = np.divide(Q * Q, norms, out=np.zeros(n_pairs), where=norms > 0.0)
    score[at.active] = -np.inf
    best = np.argsort(-score, kind="stable")[: size // 2]
    rest = np.setdiff1d(np.arange(n_pairs), np.union1d(best, at.active))
    spread = rng.choice(rest, size=min(size - best.size, rest.size), replace=False)
    return np.sort(np.concatenate([best, spread]))


def _single_moves(likelihood: Likelihood, Phi: Array, squares: Array, T: Array, at: _Linearised,
                  opts: FastOptions) -> list[tuple[int, float, float]]:
    """Every single move (pair, new alpha, gain) of Result 7.18 on the effective problem at ``at``, best first.

    Kept pairs: s, q from Sigma and w* (re-estimate (7.101) or delete, inf);
    excluded pairs: S_j = phi_j^T B phi_j - g_j^T Sigma g_j and Q_j = phi_j^T (t - y)
    on the whitened columns (the certificate's factors, ``certificate.laplace_report``).
    Only moves that gain more than ``tol``.
    """
    from .certificate import gain_to_optimum  # the certificate's gains of a kept weight

    eff = _whiten(likelihood, Phi, squares, T, at)
    design, PhiTt, norms = eff.design, eff.PhiTt, eff.norms
    moves: list[tuple[int, float, float]] = []
    Sigma = covariance_from_factor(at.mode.R) if at.active.size else np.zeros((0, 0))  # (7.113)
    if at.active.size:
        d = np.diag(Sigma)
        s, q = 1.0 / d - at.alpha, at.mode.w / d
        with np.errstate(divide="ignore", invalid="ignore"):
            reestimate, delete = gain_to_optimum(at.alpha, s, q)
            optimum = np.where(q * q > s, s * s / (q * q - s), np.inf)  # (7.101)
        for p in range(at.active.size):
            if q[p] ** 2 > s[p] and optimum[p] <= opts.alpha_max and reestimate[p] > opts.tol:
                moves.append((int(at.active[p]), float(optimum[p]), float(reestimate[p])))
            elif delete[p] > opts.tol and at.active.size > 1:
                moves.append((int(at.active[p]), math.inf, float(delete[p])))
        G = design.project(design.columns(at.active))  # Phi_w^T Phi_w,a
        S = norms - np.einsum("jp,pq,jq->j", G, Sigma, G)  # (7.106) with beta I -> B
        Q = PhiTt - G @ at.mode.w  # (7.107): phi_j^T (t - y) at the mode
    else:
        S, Q = norms, PhiTt
    out = np.ones(S.size, dtype=bool)
    out[at.active] = False
    out &= S > opts.span_tol * norms
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(out, Q * Q / S, 0.0)
    for j in np.flatnonzero((x > 1.0) & ((x - 1.0) * opts.alpha_max > S)):
        gain = 0.5 * (x[j] - 1.0 - math.log(x[j]))  # Result 7.18(c)
        if gain > opts.tol:
            moves.append((int(j), float(S[j] / (x[j] - 1.0)), float(gain)))
    moves.sort(key=lambda move: -move[2])
    return moves


def _exact_move(likelihood: Likelihood, Phi: Array, squares: Array, T: Array, kept: _Linearised,
                opts: FastOptions, mode_opts: ModeOptions) -> tuple[_Linearised | None, float]:
    """The first of the ``TRY_MOVES`` best single moves (``_single_moves``) that raises (7.114) once the mode
    is found again, and 0.0; when none does (the effective problem's gains are then not the Laplace
    evidence's), None and the largest gain left on the effective problem."""
    moves = _single_moves(likelihood, Phi, squares, T, kept, opts)
    for j, alpha_new, _ in moves[:TRY_MOVES]:
        where = np.flatnonzero(kept.active == j)
        if where.size == 0:  # add
            active, alpha, w0 = np.append(kept.active, j), np.append(kept.alpha, alpha_new), np.append(kept.mode.w, 0.0)
        elif math.isinf(alpha_new):  # delete
            keep = kept.active != j
            active, alpha, w0 = kept.active[keep], kept.alpha[keep], kept.mode.w[keep]
        else:  # re-estimate (7.101)
            active, alpha, w0 = kept.active, kept.alpha.copy(), kept.mode.w
            alpha[where[0]] = alpha_new
        trial = _linearise(likelihood, Phi, T, active, alpha, w0, mode_opts)
        if trial.value > kept.value:
            return trial, 0.0
    return None, (moves[0][2] if moves else 0.0)


def _spread_start(Phi: Array, n_outputs: int) -> tuple[Index, Array]:
    """The first model: about ``SPREAD_START`` pairs, every output of columns evenly spaced over the columns
    ordered by their sums sum_n Phi_ni, alpha = ``SPREAD_ALPHA``.

    Ordered by the columns' sums, which do not depend on the order of the training points (for a kernel
    design, the kernel's density at x_i), not by their index, and the same columns for every output: spaced
    over the pairs' index, the start and the maximum it led to changed when the rows were shuffled or the
    classes renamed (six classes: probabilities moved by 0.37 and 0.43).

    Grown from the empty model, single moves stop at the first maximum where
    each further function is, alone, not worth adding (on breast cancer at
    gamma = 1e-4: 10 functions, 6 nats below MacKay's (7.116) from every
    function). Started with many functions, as MacKay's re-estimation is, the
    blocks prune down to a higher maximum, at the cost of one mode search
    over ``SPREAD_START`` columns.
    """
    M = Phi.shape[1]
    order = np.argsort(Phi.sum(axis=0), kind="stable")
    ranks = np.unique(np.linspace(0, M - 1, min(max(SPREAD_START // n_outputs, 1), M)).astype(np.intp))
    columns = np.sort(order[ranks])
    active = (columns[:, None] * n_outputs + np.arange(n_outputs)).ravel()     # pair index i O + k
    return active, np.full(active.size, SPREAD_ALPHA)


def fast_laplace(likelihood: Likelihood, Phi: Array, T: Array, opts: FastOptions,
                 mode_opts: ModeOptions, start: tuple[Index, Array] | None = None) -> tuple[FastOutcome, Laplace]:
    """Algorithm 7.2 for a non-conjugate likelihood over the pairs (column of ``Phi``, output).

    From ``start`` (pairs and alphas; by default ``_spread_start`` and, for
    at most ``EMPTY_START_MAX`` pairs, also the empty model, the higher
    maximum kept: the maxima reached from the two differ by several nats
    either way), blocks of
    the regression's steps (``fast_regression``: the candidate
    pool, the compiled rank-one loops and the sweeps) on the effective
    problem (7.117)-(7.119) held fixed at the current Laplace mode
    (``_effective_run``); after each block the mode is found again at the
    block's alphas (re-linearised). A block works on ``LAPLACE_POOL`` pairs
    chosen afresh each time (``_block_pool``) and the included ones, without sweeps; when it
    takes no step, the next block reaches every pair (the regression's sweeps)
    before the run may stop. At the first state where no single move gains
    more than ``tol`` (for at most ``EMPTY_START_MAX`` pairs), MacKay's
    joint re-estimation (7.116) of the kept alphas is tried (``_laplace_polish``, kept while it raises (7.114) by more
    than ``tol``), and the blocks run again from where it ends. A block is
    kept only if the Laplace
    evidence (7.114) rises, and the next may then take twice as many steps
    (``FIRST_BLOCK`` at first: far from the mode the effective problem is a
    poor guide); otherwise it is run again with half as many steps, from the
    same kept state. So the evidence of the kept states
    never falls (no cycle can repeat a state) and the last kept state is the
    best visited. The run has converged when a block at the kept mode takes
    no step: no single move (add, re-estimate, delete; Result 7.18) on its
    effective problem gains more than ``tol``. When even the single best
    move lowers (7.114) (the effective problem ignores that B moves with
    w*), the next best ``TRY_MOVES`` are tried, each with its own mode, and
    the first that raises (7.114) is kept (``_exact_move``); when none does
    the run stops there, converged only if no move gains more than
    ``STUCK_TOL`` tol on the effective problem.

    ``active`` in the outcome holds pair indices i O + k, ``log_evidence``
    the Laplace evidence of each kept state and ``iterations`` the steps
    taken. Returns the outcome and the Laplace approximation at its alpha.
    """
    n_pairs = Phi.shape[1] * T.shape[1]
    squares = Phi**2
    if start is not None:
        starts = [start]
    else:
        starts = [_spread_start(Phi, T.shape[1])]
        if n_pairs <= EMPTY_START_MAX:
            starts.append((np.zeros(0, dtype=np.intp), np.zeros(0)))
    # max_iter caps every start's steps and re-estimations together, as it caps the regression's: the
    # bottom-up starts climb first, and the top-down starts (their re-estimations, then their steps) take
    # what is left (computed first, they could leave the first ascent no step at all)
    best, best_mode, iterations = None, None, 0
    top_down: list[tuple[Index, Array]] = []
    failed: SolverError | None = None
    for active, alpha in starts:
        if best is not None and iterations >= opts.max_iter:
            break
        try:
            outcome, mode = _ascend(likelihood, Phi, squares, T, active, alpha,
                                    replace(opts, max_iter=max(opts.max_iter - iterations, 0)), mode_opts)
        except SolverError as exc:  # no mode at this start (an AttributeError on its None mode before)
            failed = exc
            continue
        iterations += outcome.iterations
        if best is None or _better_start(outcome, best):
            best, best_mode = outcome, mode
    if start is None and n_pairs <= TOP_DOWN_SIZE and iterations < opts.max_iter:
        top_down, used = _top_down_pairs(likelihood, Phi, T, replace(opts, max_iter=opts.max_iter - iterations),
                                         mode_opts)
        iterations += used
    results = [] if best is None else [(best, best_mode)]
    for active, alpha in top_down:
        if iterations >= opts.max_iter:
            break
        try:
            outcome, mode = _ascend(likelihood, Phi, squares, T, active, alpha,
                                    replace(opts, max_iter=opts.max_iter - iterations), mode_opts)
        except SolverError as exc:
            failed = exc
            continue
        iterations += outcome.iterations
        results.append((outcome, mode))
    if not results:  # every start failed: the caller's error (``laplace_fit._finished`` keeps its own result)
        raise failed
    best, best_mode = _chosen_result(results)
    return replace(best, iterations=iterations), best_mode


def _better_start(outcome: FastOutcome, best: FastOutcome) -> bool:
    """A converged run beats one that is not; among runs alike the higher evidence."""
    if outcome.converged != best.converged:
        return outcome.converged
    return outcome.log_evidence[-1] > best.log_evidence[-1]


def _chosen_result(results: list[tuple[FastOutcome, Any]]) -> tuple[FastOutcome, Any]:
    """The bottom-up starts' best and the top-down starts' results, all at once: among the converged ones
    (all, if none converged) the sparsest within ``TOP_DOWN_GAIN`` of the highest (``sparsest_near_best``)."""
    converged = [r for r in results if r[0].converged] or results
    values = [outcome.log_evidence[-1] for outcome, _ in converged]
    return converged[sparsest_near_best(values, [outcome.active.size for outcome, _ in converged])]


def centred_alphas(Phi: Array, alpha_init: float) -> list[Array]:
    """The centred starts: for each of ``CENTRED_FACTORS`` one alpha per column of ``Phi`` (N, M),
    alpha_i = alpha_init x factor x var(phi_i) / mean(phi_i^2), alpha_init where that ratio is at most
    ``CENTRED_FLAT``; none unless some column's ratio lies between ``CENTRED_FLAT`` and ``CENTRED_BELOW``.

    On columns of unit mean square (the solver's units) a unit prior alpha_i = 1 bounds the whole column's
    weight; a column c 1 + v nearly constant beside the bias (a dot-product kernel on inputs with a large
    common offset) gives its variation v a prior var(phi_i) times as tight, and the weight v needs is out of
    its reach: MacKay's (7.116) from there prunes every function. The centred alpha_i gives v the prior scale
    a unit column would have (times the factor), and is alpha_init x factor on ordinary columns.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.var(Phi, axis=0) / np.mean(Phi * Phi, axis=0)
    return centred_starts(relative, alpha_init)


def centred_starts(relative: Array, alpha_init: float, below: float = CENTRED_BELOW) -> list[Array]:
    """``centred_alphas`` from each column's relative variance var(phi_i) / mean(phi_i^2) (``relative``; NaN
    for an empty column is taken as flat); none unless some column's lies between ``CENTRED_FLAT`` and ``below``."""
    relative = np.where(np.isfinite(relative), relative, 0.0)
    varied = relative > CENTRED_FLAT
    if not np.any(varied & (relative < below)):
        return []
    return [np.where(varied, alpha_init * factor * relative, alpha_init) for factor in CENTRED_FACTORS]


def _top_down_pairs(likelihood: Likelihood, Phi: Array, T: Array, opts: FastOptions,
                    mode_opts: ModeOptions) -> tuple[list[tuple[Index, Array]], int]:
    """Starts from every pair: where MacKay's (7.116) from alpha_i = each of ``TOP_DOWN_ALPHAS`` stops, and
    from the centred starts (``centred_alphas``) where some column is nearly constant beside the bias.

    The classification counterpart of ``top_down_start``: on raw, badly scaled
    inputs the maxima reached from the spread and the empty starts lie 15-30
    nats below the one a weak prior on every function leads to (breast
    cancer, benchmarks/rvm_accuracy.py). Pairs sorted, as a ``start``; and the re-estimations they took, within
    ``opts.max_iter`` together.
    """
    starts, O, iterations = [], T.shape[1], 0
    for alpha_init in TOP_DOWN_ALPHAS + tuple(centred_alphas(Phi, ALPHA_INIT)):
        cap = min(DEFAULT_MAX_ITER["mackay"], opts.max_iter - iterations)
        if cap <= 0:
            break
        iterative = LaplaceIterativeOptions("mackay", opts.tol, cap, min(TOP_DOWN_PRUNE, opts.alpha_max),
                                            alpha_init, mode_opts)
        try:
            out = iterative_laplace(likelihood, Phi, T, iterative)
        except SolverError:  # a weak prior on nearly collinear columns: the Hessian lost definiteness
            continue
        iterations += out.iterations
        index = out.basis * O + out.output
        order = np.argsort(index)
        starts.append((index[order], out.alpha[order]))
    return starts, iterations


def _laplace_polish(likelihood: Likelihood, Phi: Array, T: Array, kept: _Linearised, opts: FastOptions,
                    mode_opts: ModeOptions) -> _Linearised | None:
    """Joint re-estimation of every kept alpha by (7.116), alpha_i = gamma_i / w_i*^2, kept while (7.114) rises.

    The single moves are coordinate moves; MacKay's update moves every alpha
    at once and can leave a ridge where they crawl. Each sweep is one mode
    search; alphas beyond ``alpha_max`` are held at it (the single moves then
    delete them). Returns the last state kept, None when no sweep was.
    """
    moved = None
    for _ in range(opts.polish_sweeps if kept.active.size else 0):
        gamma = 1.0 - kept.alpha * np.diag(covariance_from_factor(kept.mode.R))  # (7.89)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = np.clip(np.nan_to_num(gamma / kept.mode.w**2, nan=opts.alpha_max, posinf=opts.alpha_max),
                            1e-12, opts.alpha_max)  # (7.116)
        trial = _linearise(likelihood, Phi, T, kept.active, alpha, kept.mode.w, mode_opts)
        if not trial.value > kept.value + opts.tol:
            break
        kept = moved = trial
    return moved


def _ascend(likelihood: Likelihood, Phi: Array, squares: Array, T: Array, active: Index, alpha: Array,
            opts: FastOptions, mode_opts: ModeOptions) -> tuple[FastOutcome, Laplace]:
    """One run of ``fast_laplace`` from the pairs ``active`` with precisions ``alpha``."""
    n_pairs = Phi.shape[1] * T.shape[1]
    size = min(opts.pool_size, n_pairs, LAPLACE_POOL)
    block = replace(opts, restarts=0, update_beta=False, pool_size=size)
    rng = np.random.default_rng(POOL_SEED)
    kept = _linearise(likelihood, Phi, T, active, alpha, np.zeros(active.size), mode_opts)
    if kept.mode is None:  # no mode at the start itself: nothing to ascend from (``fast_laplace`` skips it)
        raise SolverError("the Laplace mode (7.109)-(7.113) could not be found at this start: its Hessian "
                          "Phi^T B Phi + A is not numerically positive definite", status="cholesky", solver="rvm")
    history, iterations, sweeps, trust, converged = [kept.value], 0, 0, FIRST_BLOCK, False
    whole = False  # whether the next block reaches every pair (the check before stopping)
    polish = n_pairs <= EMPTY_START_MAX  # MacKay's joint move still to be tried (once; small problems only)
    while iterations < opts.max_iter:
        eff = _whiten(likelihood, Phi, squares, T, kept)
        pool = None if whole else _block_pool(eff, kept, size, rng)
        out = _effective_run(eff, kept,
                             replace(block, max_iter=min(trust, opts.max_iter - iterations)), pool)
        iterations, sweeps = iterations + out.iterations, sweeps + out.sweeps
        if out.iterations == 0:
            if not (whole or pool is None):
                whole = True  # no step in the pool: check every pair before stopping
                continue
            polished = _laplace_polish(likelihood, Phi, T, kept, opts, mode_opts) if polish else None
            if polished is None:
                converged = out.converged
                break
            kept, whole, polish = polished, False, False  # MacKay's joint move left a ridge: single moves again
            iterations += 1
            history.append(polished.value)
            continue
        trial = _linearise(likelihood, Phi, T, out.active, out.alpha, out.mean, mode_opts)
        if trial.value > kept.value:  # (7.114) rose: keep the block, allow a longer one
            kept, trust, whole = trial, max(trust, 2 * out.iterations), False
            history.append(trial.value)
            continue
        trust = out.iterations // 2  # the same steps, fewer of them
        if trust == 0:  # the best single move lowers (7.114): try the next ones, each at its own mode
            moved, left = _exact_move(likelihood, Phi, squares, T, kept, opts, mode_opts)
            if moved is None:  # no move tried raises (7.114): the best state is kept
                converged = left <= STUCK_TOL * opts.tol
                break
            kept, trust, whole = moved, FIRST_BLOCK, False
            iterations += 1
            history.append(moved.value)
    over = kept.alpha > opts.alpha_max
    if over.any() and iterations < opts.max_iter:
        # a start beyond alpha_max (the spread start's alpha 1 over alpha_max = 1e-20) that no move brought in came
        # back as it was, its pairs above the threshold that prunes them, 'converged': pruned, and on from there
        keep = ~over
        rest, mode = _ascend(likelihood, Phi, squares, T, kept.active[keep], kept.alpha[keep],
                             replace(opts, max_iter=opts.max_iter - iterations), mode_opts)
        return replace(rest, log_evidence=np.concatenate([history, rest.log_evidence]),
                       iterations=iterations + rest.iterations, sweeps=sweeps + rest.sweeps), mode
    outcome = FastOutcome(active=kept.active, alpha=kept.alpha.copy(), beta=1.0, log_evidence=np.asarray(history),
                          iterations=iterations, converged=converged and not over.any(), sweeps=sweeps)
    return outcome, kept.mode


def _outcome(run: _Run, converged: bool, refused: float = 0.0) -> FastOutcome:
    state = run.state
    return FastOutcome(
        active=state.pool.index[state.active],
        alpha=state.alpha.copy(),
        beta=state.beta,
        log_evidence=np.asarray(run.history),
        iterations=run.iterations,
        converged=converged,
        sweeps=run.sweeps,
        refused=refused,
        mean=state.m.copy(),
        whitened_ends=tuple(run.whitened_ends),
    )
