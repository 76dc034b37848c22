"""Compiled inner loops of the SMO solver (numba, ``cache=True``).

Everything here works on the standard-form QP of ``standard_qp``

    minimise 1/2 a^T Q a + p^T a   s.t.  y^T a = delta, [e^T a = nu_sum], l <= a <= u,
    Q_ij = scale y_i y_j K[index_i, index_j],

and knows nothing about SVMs. The loops stop and return to Python whenever a
kernel row is missing from the cache (``NEED_ROWS``; float32 RBF rows of a dense
X are computed in the loop instead, ``fill_here``), when the gradient of
shrunk variables must be reconstructed (``RECONSTRUCT``) or when the trace
buffer is full (``TRACE_FULL``); the Python driver (``smo.py``) does that work
with BLAS and calls the loop again. A loop never changes the iterate before
it has every row that the step needs, so the call is simply repeated.

Notation (Fan, Chen and Lin 2005; LIBSVM): v_t = -y_t G_t with G = Q a + p (the
state holds v rather than G: the hot loops then need no y);
I_up = {t : y_t = +1, a_t < u_t  or  y_t = -1, a_t > l_t} (y_t a_t can grow),
I_low = {t : y_t = +1, a_t > l_t  or  y_t = -1, a_t < u_t} (y_t a_t can shrink),
m = max_{I_up} v, M = min_{I_low} v; a is optimal iff m - M <= 0, and the
solver stops when m - M < tol. The nu forms (two equalities) pair variables
only within one sign of y (LIBSVM's Solver_NU): every quantity is taken per
group, group(t) = 0 in the plain form, group(t) = (y_t < 0) in the nu form,
and the violation is the larger of the two groups' m - M.

The state travels in tuples of arrays:

    prob  = (y, p, lower, upper, index, QD, y0, index0)   the problem; QD_i = Q_ii
    st    = (a, v, G_bar, perm, flags)                    the iterate
    cache = (store, slot_of, last_used, pend_slot, pend_coef,
             cbuf, cslot_of, cowner, ident, Xd,
             owner, filled, Xt, sums, fill_slots)          kernel rows (see kernel_cache)
    ctrl, fpar                                            integer and float control blocks
    trace = (i, j, delta, L, H, eta, objective, violation)  step records

The per-variable arrays of prob and st are kept with the active (unshrunk)
variables first, in the caller's relative order, as LIBSVM keeps its active
set first; ``perm`` maps positions back to the caller's variables, and y0,
index0 and G_bar stay in the caller's order. Full kernel rows are indexed by
training point, so they never move when variables do. Once the active set is
small (at most 1/COMPACT_RATIO of the variables) the hot loops read compact
rows instead: the active entries only, in active order, gathered from a full
row or, for the RBF kernel, computed directly (LIBSVM's rows of active length).
Full rows are then needed only for the rare bound changes, which update
G_bar = sum_{a_j = u_j} u_j Q_j over all variables, in batches.

The steps of the second-order and first-order rules run in ``_steps``,
compiled without numba's reference counting (``_nrt=False``) and with their
helpers inlined: every array a numba function is handed is counted on entry
and on exit, and the 24 arrays of these tuples, handed to a step's helpers,
cost about 350 atomic updates a step. Nothing under ``_steps`` allocates or
hands an array back out; the shrinking passes, which do, run in ``run_smo``
between calls.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

# -- return codes ---------------------------------------------------------------
OPTIMAL = 0
NEED_ROWS = 1
MAX_ITER = 2
UNBOUNDED = 3
TRACE_FULL = 4
RECONSTRUCT = 5           # shrinking: m - M fell below UNSHRINK_FACTOR * tol, or a recheck is due
RECONSTRUCT_FINAL = 6     # optimal on the active set: check on all variables
CHANGED = 7               # internal: a step was taken
UNCHANGED = 8             # internal: no step
SHRINK_DUE = 9            # internal: run_smo's steps stop for a shrinking pass

# -- Platt's phases ----------------------------------------------------------------------
P_FREE = 0            # a pass over the free variables
P_ALL = 1             # a pass over all variables
P_FINISH = 2          # maximal violating pairs until m - M < tol

# -- working-set rules -------------------------------------------------------------
WSS_PLATT = 0
WSS_FIRST = 1
WSS_SECOND = 2

# -- integer control block (ctrl) -----------------------------------------------------
C_ITER = 0            # steps taken
C_MAX_ITER = 1        # iteration cap
C_ACTIVE = 2          # number of active variables (a prefix of the arrays)
C_CLOCK = 3           # LRU clock of the row cache
C_NREQ = 4            # number of rows requested (points in C_REQ..C_REQ+2)
C_REQ = 5
MAX_REQUESTS = 3      # rows a step may request at once: ctrl[C_REQ:C_REQ + MAX_REQUESTS]
C_SHRINK_COUNTER = 8  # steps until the next shrinking pass
C_UNSHRUNK = 9        # 1 once the gradient was reconstructed near the optimum
C_WSS = 10
C_SHRINKING = 11
C_NU = 12
C_RECORD = 13
C_TRACE_LEN = 14
C_HAS_INF = 15        # some upper bound is +inf (hard margin)
C_P_ALL = 16          # Platt: P_ALL, P_FREE (which variables a pass examines) or P_FINISH
C_P_POS = 17          # Platt: position of the next variable to examine
C_P_CHANGED = 18      # Platt: steps taken in this pass
C_SHRINK_INTERVAL = 19
C_EXT_VALID = 20      # 1 when the extremes below are those of the current iterate and active set
C_I0 = 21             # argmax of v over I_up per group, argmin over I_low per group
C_I1 = 22
C_J0 = 23
C_J1 = 24
C_NPEND = 25         # bound changes waiting to be applied to G_bar
C_COMPACT = 26       # 1 while rows are kept compact (active entries only, in active order)
C_CLEN = 27          # stride of a compact row (the active size when compact mode began)
C_CSLOTS = 28        # compact rows that fit in cbuf at that stride
C_CNEXT = 29         # next compact slot to (re)use (first in, first out)
C_COMPACT_USED = 30  # 1 once compact rows were used in this run (a diagnostic)
C_LAST_RECON = 31    # shrinking: C_ITER at the last reconstruction of the gradient (or the start)
C_RECHECK = 32       # shrinking: steps after C_LAST_RECON at which the shrunk variables are checked
C_CHECKING = 33      # shrinking: 1 while such a check's reconstruction is pending
C_FILL_HERE = 34     # 1 when a missing full row is computed in the loop (``fill_here``), not by the caller
C_ROWS_FILLED = 35   # rows computed in the loop since the caller last counted them
C_SIZE = 36

# -- float control block (fpar) ----------------------------------------------------
F_TOL = 0
F_TAU = 1
F_SCALE = 2
F_OBJ = 3             # f(a), updated step by step
F_PTA = 4             # p^T a
F_UNBOUNDED = 5       # margin_tol * sqrt(max_i Q_ii): the unboundedness threshold
F_GAP = 6             # m - M at the last selection
F_THR0 = 7            # Platt's thresholds (the KKT value of G_t per group)
F_THR1 = 8
F_PLATT_TOL = 9       # Platt's per-example KKT tolerance
F_UP0 = 10            # m_g = max_{I_up, g} v
F_UP1 = 11
F_LOW0 = 12           # M_g = min_{I_low, g} v
F_LOW1 = 13
F_PLATT_EPS = 14      # Platt's smallest relative change of a_j for a step to count
F_GAMMA = 15          # RBF gamma for compact rows computed directly (when Xd has rows)
F_CHECK_VIOL = 16     # shrinking: m - M over the active variables when the last check began
F_SIZE = 17

# -- status flags of a variable ----------------------------------------------------
UP = 1                # in I_up
LOW = 2               # in I_low
NEG = 4               # group 1 (nu form, y = -1)

#: shrinking: reconstruct the gradient once m - M <= this * tol (LIBSVM's 10)
UNSHRINK_FACTOR = 10.0
#: shrinking: the shrunk variables are checked (the gradient reconstructed, then shrunk again)
#: at the latest RECHECK_FACTOR * n steps after the last reconstruction. LIBSVM reconstructs only
#: once m - M <= 10 tol on the active set and when it is optimal there; a variable shrunk too
#: early can then keep the active set crawling (a flat valley of a degenerate dual: a linear
#: kernel with more free multipliers than dimensions) for millions of steps. The wait doubles
#: at each check, and starts again from RECHECK_FACTOR * n when a check found such variables.
RECHECK_FACTOR = 20
#: a check found wrongly shrunk variables when m - M over all is above this times m - M over the active
RECHECK_FOUND = 2.0
#: compact rows once the active set is at most 1/COMPACT_RATIO of the variables
COMPACT_RATIO = 8
#: fewest compact rows worth the mode (a step holds three)
COMPACT_MIN_SLOTS = 8
#: rows a step may be using while it asks for more (the pair, or the nu rule's two rows)
PINNED_ROWS = 3


# ======================================================================================
# small helpers
# ======================================================================================
@njit(cache=True)
def in_up(k, y, a, lower, upper):
    """t in I_up: y_t a_t can increase."""
    if y[k] > 0:
        return a[k] < upper[k]
    return a[k] > lower[k]


@njit(cache=True)
def in_low(k, y, a, lower, upper):
    """t in I_low: y_t a_t can decrease."""
    if y[k] > 0:
        return a[k] > lower[k]
    return a[k] < upper[k]


@njit(cache=True, inline="always")
def status(k, y, a, lower, upper, nu):
    """The flags UP, LOW and NEG of variable k."""
    f = 0
    if in_up(k, y, a, lower, upper):
        f |= UP
    if in_low(k, y, a, lower, upper):
        f |= LOW
    if nu and y[k] < 0:
        f |= NEG
    return f


@njit(cache=True)
def set_flags(prob, st, nu):
    """Flags of every variable from the iterate."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    for k in range(a.shape[0]):
        flags[k] = status(k, y, a, lower, upper, nu)


@njit(cache=True, inline="always")
def group(k, flags):
    """0 in the plain form; in the nu form 0 for y = +1 and 1 for y = -1."""
    return (flags[k] >> 2) & 1


@njit(cache=True, inline="always")
def row_slot(point, slot_of, last_used, ctrl):
    """Slot of point's kernel row, marked as used; -1 (and the point requested) if missing."""
    s = slot_of[point]
    if s >= 0:
        last_used[s] = ctrl[C_CLOCK]
        ctrl[C_CLOCK] += 1
        return s
    for r in range(ctrl[C_NREQ]):
        if ctrl[C_REQ + r] == point:
            return -1
    ctrl[C_REQ + ctrl[C_NREQ]] = point
    ctrl[C_NREQ] += 1
    return -1


@njit(cache=True, inline="always")
def get_row(point, prob, cache, ctrl, fpar, pin):
    """(ok, row, idx, slot): the kernel row of ``point`` over the active variables,
    K(point, x_index(t)) = row[idx[t]] for t < active size.

    Normally a full cached row (idx = index, slot its slot); in compact mode a
    compact row (idx = identity, slot -1), whose making never evicts the compact
    row of point ``pin`` (the other row of the step). ok is False (and the row
    requested) when it is missing.
    """
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    index = prob[4]
    if ctrl[C_COMPACT] == 1:
        cs = compact_slot(point, prob, cache, ctrl, fpar, pin)
        if cs < 0:
            return False, store[0], index, -1
        L = ctrl[C_CLEN]
        return True, cbuf[cs * L:(cs + 1) * L], ident, -1
    s = row_slot(point, slot_of, last_used, ctrl)
    if s < 0:
        return False, store[0], index, -1
    return True, store[s], index, s


@njit(cache=True)
def compact_slot(point, prob, cache, ctrl, fpar, pin):
    """The compact row of ``point``: cached, else gathered from its full row, else computed
    (RBF, from Xd); -1 and the full row requested when none of these is possible."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    cs = cslot_of[point]
    if cs >= 0:
        return cs
    s = slot_of[point]
    if s < 0 and Xd.shape[0] == 0:
        row_slot(point, slot_of, last_used, ctrl)          # request the full row
        return -1
    cs = ctrl[C_CNEXT]
    if pin >= 0 and cowner[cs] == pin:
        cs = (cs + 1) % ctrl[C_CSLOTS]
    ctrl[C_CNEXT] = (cs + 1) % ctrl[C_CSLOTS]
    if cowner[cs] >= 0:
        cslot_of[cowner[cs]] = -1
    L = ctrl[C_CLEN]
    row = cbuf[cs * L:(cs + 1) * L]
    size = ctrl[C_ACTIVE]
    if s >= 0:
        full = store[s]
        for t in range(size):
            row[t] = full[index[t]]
    else:
        rbf_active(Xd, point, index, size, fpar[F_GAMMA], row)
    cowner[cs] = point
    cslot_of[point] = cs
    return cs


@njit(cache=True)
def rbf_active(Xd, point, index, size, gamma, row):
    """row[t] = exp(-gamma ||x_point - x_index(t)||^2) for the active t (float64 throughout)."""
    D = Xd.shape[1]
    x = Xd[point]
    for t in range(size):
        z = Xd[index[t]]
        acc = 0.0
        for d in range(D):
            diff = x[d] - z[d]
            acc += diff * diff
        row[t] = np.exp(-gamma * acc)


@njit(cache=True)
def compact_shrink(cache, ctrl, order, size):
    """After shrinking: compact rows keep the entries of the variables still active
    (order[t] >= t, increasing), in place."""
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    L = ctrl[C_CLEN]
    for cs in range(ctrl[C_CSLOTS]):
        if cowner[cs] < 0:
            continue
        row = cbuf[cs * L:(cs + 1) * L]
        for t in range(size):
            row[t] = row[order[t]]


@njit(cache=True)
def enter_compact(cache, ctrl, size, n):
    """Compact rows from now on, if the active set is small and enough rows of its length fit."""
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    if size == 0 or size * COMPACT_RATIO > n:
        return
    slots = min(cbuf.shape[0] // size, cowner.shape[0])
    if slots < COMPACT_MIN_SLOTS:
        return
    ctrl[C_COMPACT] = 1
    ctrl[C_COMPACT_USED] = 1
    ctrl[C_CLEN] = size
    ctrl[C_CSLOTS] = slots
    ctrl[C_CNEXT] = 0


@njit(cache=True)
def leave_compact(cache, ctrl):
    """Back to full rows (the active set grows): forget every compact row."""
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    for cs in range(cowner.shape[0]):
        if cowner[cs] >= 0:
            cslot_of[cowner[cs]] = -1
            cowner[cs] = -1
    ctrl[C_COMPACT] = 0


@njit(cache=True, inline="always")
def scan(prob, st, size, Ki, Kj, idx, ci, cj, update):
    """Over the first ``size`` variables: if ``update``, v_t -= c_i K_i[idx_t] + c_j K_j[idx_t]
    (v = -y G changes so after a step, c = scale y da); then m_g = max_{I_up, g} v and
    M_g = min_{I_low, g} v with their argmax/argmin, in the same pass."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    m0 = -np.inf
    m1 = -np.inf
    M0 = np.inf
    M1 = np.inf
    i0 = -1
    i1 = -1
    j0 = -1
    j1 = -1
    for k in range(size):
        if update:
            V[k] -= ci * Ki[idx[k]] + cj * Kj[idx[k]]
        v = V[k]
        f = flags[k]
        vu = v if f & UP else -np.inf      # selects, not branches: the flags follow no pattern
        vl = v if f & LOW else np.inf
        if f & NEG:                         # strict: a sentinel never wins
            if vu > m1:
                m1 = vu
                i1 = k
            if vl < M1:
                M1 = vl
                j1 = k
        else:
            if vu > m0:
                m0 = vu
                i0 = k
            if vl < M0:
                M0 = vl
                j0 = k
    return m0, m1, M0, M1, i0, i1, j0, j1


@njit(cache=True)
def extremes(prob, st, size):
    """m_g = max_{I_up, g} v, M_g = min_{I_low, g} v over the first ``size`` variables, with argmax/argmin."""
    QD = prob[5]                        # rows not read (update False): any float array
    return scan(prob, st, size, QD, QD, prob[4], 0.0, 0.0, False)


@njit(cache=True, inline="always")
def keep_extremes(ctrl, fpar, m0, m1, M0, M1, i0, i1, j0, j1):
    """Store the extremes of the current iterate for the next selection."""
    fpar[F_UP0] = m0
    fpar[F_UP1] = m1
    fpar[F_LOW0] = M0
    fpar[F_LOW1] = M1
    ctrl[C_I0] = i0
    ctrl[C_I1] = i1
    ctrl[C_J0] = j0
    ctrl[C_J1] = j1
    ctrl[C_EXT_VALID] = 1


@njit(cache=True, inline="always")
def current_extremes(prob, st, ctrl, fpar):
    """The stored extremes if valid, else a fresh scan over the active variables."""
    if ctrl[C_EXT_VALID] == 0:
        m0, m1, M0, M1, i0, i1, j0, j1 = extremes(prob, st, ctrl[C_ACTIVE])
        keep_extremes(ctrl, fpar, m0, m1, M0, M1, i0, i1, j0, j1)
    return (fpar[F_UP0], fpar[F_UP1], fpar[F_LOW0], fpar[F_LOW1],
            ctrl[C_I0], ctrl[C_I1], ctrl[C_J0], ctrl[C_J1])


@njit(cache=True, inline="always")
def violation(m0, m1, M0, M1):
    """The maximal KKT violation max_g (m_g - M_g) (-inf when no pair exists)."""
    return max(m0 - M0, m1 - M1)


# ======================================================================================
# working-set selection
# ======================================================================================
@njit(cache=True, inline="always")
def second_order_j(prob, st, row0, row1, idx, i0, i1, m0, m1, size, scale, tau, nu):
    """j = argmin over t in I_low with b_t = m_g - v_t > 0 of -b_t^2 / a_it (Fan et al. 2005, WSS 2).

    a_it = Q_ii + Q_tt - 2 y_i y_t Q_it = QD_i + QD_t - 2 scale K_it, replaced by tau when <= 0;
    compared as b^2 a_best >= b_best^2 a (no division). K_it = row_g[idx_t]. One group in
    the plain form.
    """
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    if not nu:
        return _second_order_plain(V, idx, flags, QD, row0, QD[i0], m0, size, scale, tau)
    best_num = 0.0
    best_den = 1.0
    j = -1
    for k in range(size):
        f = flags[k]
        if not f & LOW:
            continue
        neg = f & NEG
        b = (m1 if neg else m0) - V[k]
        if b <= 0.0:
            continue
        if neg:
            quad = QD[i1] + QD[k] - 2.0 * scale * row1[idx[k]]
        else:
            quad = QD[i0] + QD[k] - 2.0 * scale * row0[idx[k]]
        if quad <= 0.0:
            quad = tau
        num = b * b
        if num * best_den >= best_num * quad:
            best_num = num
            best_den = quad
            j = k
    return j


@njit(cache=True, inline="always")
def _second_order_plain(V, idx, flags, QD, row, q_i, m, size, scale, tau):
    """second_order_j with one group (y^T a = delta alone)."""
    best_num = 0.0
    best_den = 1.0
    j = -1
    for k in range(size):
        if not flags[k] & LOW:
            continue
        b = m - V[k]
        if b <= 0.0:
            continue
        quad = q_i + QD[k] - 2.0 * scale * row[idx[k]]
        if quad <= 0.0:
            quad = tau
        num = b * b
        if num * best_den >= best_num * quad:
            best_num = num
            best_den = quad
            j = k
    return j


@njit(cache=True, inline="always")
def select_working_set(prob, st, cache, ctrl, fpar):
    """Working set (i, j) by the first- or second-order rule; returns (code, i, j).

    code is OPTIMAL when m - M < tol, NEED_ROWS when a row is missing, else CHANGED.
    """
    index = prob[4]
    flags = st[4]
    size = ctrl[C_ACTIVE]
    m0, m1, M0, M1, i0, i1, j0, j1 = current_extremes(prob, st, ctrl, fpar)
    gap = violation(m0, m1, M0, M1)                   # m(a) - M(a) (Keerthi et al. 2001; Fan et al. 2005)
    fpar[F_GAP] = gap
    if gap < fpar[F_TOL]:                             # the stopping rule m(a) - M(a) < tol
        return OPTIMAL, -1, -1
    if ctrl[C_WSS] == WSS_FIRST:                      # the maximal violating pair (Keerthi et al. 2001)
        if m0 - M0 >= m1 - M1:
            return CHANGED, i0, j0
        return CHANGED, i1, j1
    ok0, row0, idx, s0 = True, cache[0][0], index, -1
    ok1, row1 = True, cache[0][0]
    if m0 - M0 > 0.0:
        ok0, row0, idx, s0 = get_row(index[i0], prob, cache, ctrl, fpar, -1)
    if m1 - M1 > 0.0:
        ok1, row1, idx, s1 = get_row(index[i1], prob, cache, ctrl, fpar, index[i0] if m0 - M0 > 0.0 else -1)
    if not (ok0 and ok1) or ctrl[C_NREQ] > 0:
        return NEED_ROWS, -1, -1
    j = second_order_j(prob, st, row0, row1, idx, i0, i1, m0, m1, size, fpar[F_SCALE], fpar[F_TAU],
                       ctrl[C_NU] == 1)
    if group(j, flags) == 0:
        return CHANGED, i0, j
    return CHANGED, i1, j


# ======================================================================================
# the analytic two-variable step
# ======================================================================================
@njit(cache=True, inline="always")
def room(k, up, y, a, lower, upper):
    """How far y_k a_k can move up (up=True) or down before a_k meets its bound."""
    if (y[k] > 0) == up:
        return upper[k] - a[k]
    return a[k] - lower[k]


@njit(cache=True, inline="always")
def clip_interval(i, j, y, a, lower, upper):
    """[L, H] for a_j on the line y_i a_i + y_j a_j = const within both boxes (gap 7.3)."""
    lo = lower[j] - a[j]
    hi = upper[j] - a[j]
    if y[i] == y[j]:      # a_i + a_j fixed: a_j + s needs a_i - s in [l_i, u_i]
        lo = max(lo, a[i] - upper[i])
        hi = min(hi, a[i] - lower[i])
    else:                 # a_i - a_j fixed: a_i + s in [l_i, u_i]
        lo = max(lo, lower[i] - a[i])
        hi = min(hi, upper[i] - a[i])
    return a[j] + lo, a[j] + hi


@njit(cache=True, inline="always")
def moved(k, d_signed, at_limit, up, y, a, lower, upper):
    """a_k + d_signed, exactly the bound when the step used all the room."""
    if at_limit:
        return upper[k] if (y[k] > 0) == up else lower[k]
    return a[k] + d_signed


@njit(cache=True)
def flush_G_bar(prob, st, cache, ctrl):
    """Apply the waiting bound changes: G_bar_o += sum_e c_e y_o K_e[index_o] (caller's order o).

    G_bar = sum_{a_j = u_j} u_j Q_j is needed only to rebuild the gradient of
    shrunk variables, so the full-length updates are gathered and done four
    rows per pass, reading each row in order.
    """
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    npend = ctrl[C_NPEND]
    e = 0
    while e < npend:                    # four at a time (scalars: no allocation under _steps)
        q = min(4, npend - e)
        c0 = pend_coef[e]
        c1 = pend_coef[e + 1] if q > 1 else 0.0
        c2 = pend_coef[e + 2] if q > 2 else 0.0
        c3 = pend_coef[e + 3] if q > 3 else 0.0
        r0 = store[pend_slot[e]]
        r1 = store[pend_slot[e + 1] if q > 1 else pend_slot[e]]
        r2 = store[pend_slot[e + 2] if q > 2 else pend_slot[e]]
        r3 = store[pend_slot[e + 3] if q > 3 else pend_slot[e]]
        for o in range(G_bar.shape[0]):
            t = index0[o]
            G_bar[o] += y0[o] * (c0 * r0[t] + c1 * r1[t] + c2 * r2[t] + c3 * r3[t])
        e += 4
    ctrl[C_NPEND] = 0


@njit(cache=True)
def protect_pending(cache, ctrl):
    """Mark the rows of waiting bound changes as just used, so that a fill keeps them."""
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    for e in range(ctrl[C_NPEND]):
        last_used[pend_slot[e]] = ctrl[C_CLOCK]
        ctrl[C_CLOCK] += 1


@njit(cache=True, inline="always")
def bound_change(k, was_upper, s, prob, st, cache, ctrl, scale):
    """Keep G_bar = sum_{a_j = u_j} u_j Q_j: queue +-u_k Q_k when a_k reaches or leaves u_k."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    now_upper = a[k] >= upper[k]
    if now_upper == was_upper:
        return
    if ctrl[C_NPEND] == pend_slot.shape[0]:
        flush_G_bar(prob, st, cache, ctrl)
    e = ctrl[C_NPEND]
    pend_slot[e] = s
    pend_coef[e] = (1.0 if now_upper else -1.0) * scale * y[k] * upper[k]
    ctrl[C_NPEND] = e + 1


@njit(cache=True, inline="always")
def full_row_for_bound_change(k, ak_new, was_upper, prob, cache, ctrl):
    """In compact mode: the slot of k's full row if a_k is about to reach or leave u_k (G_bar
    is updated over all variables), requested when missing; -1 when no bound changes."""
    upper, index = prob[3], prob[4]
    if (ak_new >= upper[k]) == was_upper:
        return -1
    return row_slot(index[k], cache[1], cache[2], ctrl)


@njit(cache=True, inline="always")
def update_pair(i, j, prob, st, cache, ctrl, fpar, trace, min_change):
    """Minimise f along y_i a_i + y_j a_j = const from the pair (i in I_up, j in I_low).

    Along d >= 0 (a_i += y_i d, a_j -= y_j d) f changes by -b d + eta d^2 / 2 with
    b = v_i - v_j > 0 and eta = Q_ii + Q_jj - 2 y_i y_j Q_ij (gap 7.3's eta), so
    d = min(b / eta, room_i, room_j) (tau for eta <= 0). A step that moves a_j by less
    than min_change (|a_j| + |a_j^new| + min_change) is not taken (Platt's progress test;
    0 for the other rules). Returns NEED_ROWS, CHANGED or UNCHANGED; nothing changes
    before every row the step needs is at hand.
    """
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    ok_i, Ki, idx, si = get_row(index[i], prob, cache, ctrl, fpar, index[j])
    ok_j, Kj, idx, sj = get_row(index[j], prob, cache, ctrl, fpar, index[i])
    if not (ok_i and ok_j):
        return NEED_ROWS
    scale = fpar[F_SCALE]
    Kij = scale * Ki[idx[j]]                          # y_i y_j Q_ij
    eta = QD[i] + QD[j] - 2.0 * Kij                   # eta = ||phi_i - phi_j||^2 (gap 7.3)
    b = V[i] - V[j]                                   # -df/dd at d = 0: t_j (E_i - E_j) of gap 7.3
    ri = room(i, True, y, a, lower, upper)            # the box (7.33) for a_i ...
    rj = room(j, False, y, a, lower, upper)           # ... and for a_j: the clip interval [L, H]
    d = min(b / (eta if eta > 0.0 else fpar[F_TAU]), ri, rj)   # delta* = b / eta, clipped (gap 7.3)
    if not d > 0.0:
        return UNCHANGED
    ai_new = moved(i, y[i] * d, d == ri, True, y, a, lower, upper)
    aj_new = moved(j, -y[j] * d, d == rj, False, y, a, lower, upper)
    if min_change > 0.0 and abs(aj_new - a[j]) < min_change * (abs(a[j]) + abs(aj_new) + min_change):
        return UNCHANGED
    upper_i, upper_j = a[i] >= upper[i], a[j] >= upper[j]
    if ctrl[C_COMPACT] == 1:
        si = full_row_for_bound_change(i, ai_new, upper_i, prob, cache, ctrl)
        sj = full_row_for_bound_change(j, aj_new, upper_j, prob, cache, ctrl)
        if ctrl[C_NREQ] > 0:
            return NEED_ROWS
    if ai_new == a[i] and aj_new == a[j]:
        return UNCHANGED
    apply_pair(i, j, ai_new, aj_new, Ki, Kj, idx, Kij, eta, si, sj, prob, st, cache, ctrl, fpar, trace)
    return CHANGED


@njit(cache=True, inline="always")
def apply_pair(i, j, ai_new, aj_new, Ki, Kj, idx, Kij, eta, si, sj, prob, st, cache, ctrl, fpar, trace):
    """Set the pair's new values; update f (exactly: G^T da + 1/2 da^T Q da), p^T a, v and the
    next extremes in one pass, the flags, the queue of G_bar updates and the trace."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    L, H = clip_interval(i, j, y, a, lower, upper)
    upper_i, upper_j = a[i] >= upper[i], a[j] >= upper[j]
    dai, daj = ai_new - a[i], aj_new - a[j]
    a[i] = ai_new
    a[j] = aj_new
    nu = ctrl[C_NU] == 1
    flags[i] = status(i, y, a, lower, upper, nu)
    flags[j] = status(j, y, a, lower, upper, nu)
    # f(a + da) - f(a) = G^T da + 1/2 da^T Q da over the pair (G_k = -y_k v_k)
    fpar[F_OBJ] += (-y[i] * V[i] * dai - y[j] * V[j] * daj + 0.5 * (QD[i] * dai * dai + QD[j] * daj * daj)
                    + y[i] * y[j] * Kij * dai * daj)
    fpar[F_PTA] += p[i] * dai + p[j] * daj
    scale = fpar[F_SCALE]
    m0, m1, M0, M1, i0, i1, j0, j1 = scan(prob, st, ctrl[C_ACTIVE], Ki, Kj, idx,
                                          scale * y[i] * dai, scale * y[j] * daj, True)
    keep_extremes(ctrl, fpar, m0, m1, M0, M1, i0, i1, j0, j1)
    bound_change(i, upper_i, si, prob, st, cache, ctrl, scale)
    bound_change(j, upper_j, sj, prob, st, cache, ctrl, scale)
    if ctrl[C_RECORD] == 1:
        record_step(i, j, daj, L, H, eta, st, ctrl, fpar, trace)


@njit(cache=True)
def record_step(i, j, delta, L, H, eta, st, ctrl, fpar, trace):
    """Append (i, j, delta, L, H, eta, f, m - M after the step) to the trace."""
    ti, tj, tdelta, tL, tH, teta, tobj, tviol = trace
    perm = st[3]
    k = ctrl[C_TRACE_LEN]
    ti[k] = perm[i]
    tj[k] = perm[j]
    tdelta[k] = delta
    tL[k] = L
    tH[k] = H
    teta[k] = eta
    tobj[k] = fpar[F_OBJ]
    tviol[k] = violation(fpar[F_UP0], fpar[F_UP1], fpar[F_LOW0], fpar[F_LOW1])
    ctrl[C_TRACE_LEN] = k + 1


@njit(cache=True, inline="always")
def unbounded(ctrl, fpar):
    """True when sqrt(a^T Q a) <= margin_tol sqrt(max Q_ii) (-p^T a), a^T Q a = 2 (f - p^T a).

    For the hard-margin dual (p = -e, u = inf) ||w(a)|| / sum(a) is at least the
    geometric margin of every separating hyperplane, so this certifies that
    none has a margin of margin_tol times the data's radius in feature space.
    (<=, not <: with every feature vector at the origin, Q = 0 and both sides are 0.)
    """
    if ctrl[C_HAS_INF] == 0:
        return False
    pta = fpar[F_PTA]
    if not pta < 0.0:
        return False
    quad = max(2.0 * (fpar[F_OBJ] - pta), 0.0)
    return np.sqrt(quad) <= fpar[F_UNBOUNDED] * (-pta)


# ======================================================================================
# shrinking (LIBSVM style)
# ======================================================================================
@njit(cache=True)
def _take(x, order):
    """x[:] = x[order] in place."""
    tmp = x[order]
    x[:] = tmp


@njit(cache=True)
def reorder(prob, st, order):
    """Put the variable at position order[k] at position k in every permuted array
    (G_bar keeps the caller's order)."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    _take(y, order)
    _take(p, order)
    _take(lower, order)
    _take(upper, order)
    _take(index, order)
    _take(QD, order)
    _take(a, order)
    _take(V, order)
    _take(perm, order)
    _take(flags, order)


@njit(cache=True)
def restore_order(prob, st):
    """Back to the caller's order (perm = identity)."""
    perm = st[3]
    order = np.empty_like(perm)
    for k in range(perm.shape[0]):
        order[perm[k]] = k
    reorder(prob, st, order)


@njit(cache=True)
def be_shrunk(k, prob, st, m0, m1, M0, M1):
    """A bounded variable that cannot be in a violating pair now: v_k < M_g (only in I_up)
    or v_k > m_g (only in I_low)."""
    a, V, G_bar, perm, flags = st
    f = flags[k]
    up = f & UP
    low = f & LOW
    if up and low:
        return False
    neg = f & NEG
    v = V[k]
    if up:
        return v < (M1 if neg else M0)
    if low:
        return v > (m1 if neg else m0)
    return True


@njit(cache=True)
def do_shrinking(prob, st, cache, ctrl, fpar):
    """Move the variables that be_shrunk behind the active ones; RECONSTRUCT once m - M <= 10 tol
    (LIBSVM's unshrink) and when RECHECK_FACTOR * n steps or more passed since the last one.

    The active ones keep their relative order, the caller's order (restored at
    each reconstruction), so that their kernel entries are read in increasing order.
    """
    size = ctrl[C_ACTIVE]
    n = st[0].shape[0]
    m0, m1, M0, M1, i0, i1, j0, j1 = current_extremes(prob, st, ctrl, fpar)
    if ctrl[C_CHECKING] == 1 and size == n:
        ctrl[C_CHECKING] = 0
        if violation(m0, m1, M0, M1) > RECHECK_FOUND * fpar[F_CHECK_VIOL]:
            ctrl[C_RECHECK] = RECHECK_FACTOR * n          # shrunk variables violated: check again soon
    if ctrl[C_UNSHRUNK] == 0 and violation(m0, m1, M0, M1) <= UNSHRINK_FACTOR * fpar[F_TOL]:
        ctrl[C_UNSHRUNK] = 1
        ctrl[C_LAST_RECON] = ctrl[C_ITER]
        return RECONSTRUCT
    if size < n:
        if ctrl[C_RECHECK] == 0:
            ctrl[C_RECHECK] = RECHECK_FACTOR * n
        if ctrl[C_ITER] - ctrl[C_LAST_RECON] >= ctrl[C_RECHECK]:
            ctrl[C_RECHECK] *= 2
            ctrl[C_LAST_RECON] = ctrl[C_ITER]
            ctrl[C_CHECKING] = 1
            fpar[F_CHECK_VIOL] = violation(m0, m1, M0, M1)
            return RECONSTRUCT
    order = np.empty(n, dtype=np.int64)
    end = 0
    for k in range(size):              # kept ones first, in their order (the caller's order)
        if not be_shrunk(k, prob, st, m0, m1, M0, M1):
            order[end] = k
            end += 1
    r = end
    for k in range(size):
        if be_shrunk(k, prob, st, m0, m1, M0, M1):
            order[r] = k
            r += 1
    for k in range(size, n):
        order[k] = k
    reorder(prob, st, order)
    if ctrl[C_COMPACT] == 1:
        compact_shrink(cache, ctrl, order, end)
    else:
        enter_compact(cache, ctrl, end, n)
    ctrl[C_ACTIVE] = end
    ctrl[C_EXT_VALID] = 0
    return CHANGED


# ======================================================================================
# the main loop of the first- and second-order rules
# ======================================================================================
@njit(cache=True)
def run_smo(prob, st, cache, ctrl, fpar, trace):
    """Iterate select_working_set / update_pair until a return code other than CHANGED.

    The shrinking passes (which allocate) run here; the steps between them in
    ``_steps``, compiled without reference counting.
    """
    ctrl[C_EXT_VALID] = 0          # the caller may have changed G or the active set
    while True:
        if ctrl[C_ITER] >= ctrl[C_MAX_ITER]:
            return MAX_ITER
        if ctrl[C_SHRINKING] == 1 and ctrl[C_SHRINK_COUNTER] <= 0:
            if do_shrinking(prob, st, cache, ctrl, fpar) == RECONSTRUCT:
                return RECONSTRUCT
            ctrl[C_SHRINK_COUNTER] = ctrl[C_SHRINK_INTERVAL]
        code = _steps(prob, st, cache, ctrl, fpar, trace)
        if code != SHRINK_DUE:
            return code


@njit(cache=True, _nrt=False)
def _steps(prob, st, cache, ctrl, fpar, trace):
    """Steps until a shrinking pass is due (SHRINK_DUE) or another return code.

    Compiled without NRT: numba counts references to every array a function
    is handed, on entry and on exit, and a step's helpers are handed the 24
    arrays of prob, st and cache several times (about 350 atomic updates per
    step, a third of the step's time on a problem of 5,000 points). Nothing
    here allocates, and no array leaves it, so nothing needs the count: the
    caller holds every array for the duration of the call.
    """
    n = prob[0].shape[0]
    capacity = trace[0].shape[0]
    while True:
        if ctrl[C_ITER] >= ctrl[C_MAX_ITER]:
            return MAX_ITER
        if ctrl[C_SHRINKING] == 1 and ctrl[C_SHRINK_COUNTER] <= 0:
            return SHRINK_DUE
        code, i, j = select_working_set(prob, st, cache, ctrl, fpar)
        if code == OPTIMAL:
            if ctrl[C_ACTIVE] < n:
                ctrl[C_LAST_RECON] = ctrl[C_ITER]
                return RECONSTRUCT_FINAL
            return OPTIMAL
        if code == NEED_ROWS:
            if ctrl[C_FILL_HERE] == 0:
                return NEED_ROWS
            fill_here(prob, st, cache, ctrl, fpar)     # and the selection again, with every row at hand
            continue
        if ctrl[C_RECORD] == 1 and ctrl[C_TRACE_LEN] >= capacity:
            return TRACE_FULL
        code = update_pair(i, j, prob, st, cache, ctrl, fpar, trace, 0.0)
        if code == NEED_ROWS:
            if ctrl[C_FILL_HERE] == 0:
                return NEED_ROWS
            fill_here(prob, st, cache, ctrl, fpar)     # nothing changed: the step again, from its selection
            continue
        ctrl[C_ITER] += 1      # an UNCHANGED step (rounding) still counts towards the cap
        ctrl[C_SHRINK_COUNTER] -= 1
        if unbounded(ctrl, fpar):
            return UNBOUNDED


# ======================================================================================
# Platt's heuristics (Platt 1999), in standard form
# ======================================================================================
@njit(cache=True)
def is_free(k, a, lower, upper):
    return lower[k] < a[k] < upper[k]


@njit(cache=True)
def midpoint(m, M):
    """(m + M)/2, or the finite one of them, or 0."""
    if np.isfinite(m) and np.isfinite(M):
        return 0.5 * (m + M)
    if np.isfinite(m):
        return m
    if np.isfinite(M):
        return M
    return 0.0


@njit(cache=True)
def set_thresholds(prob, st, ctrl, fpar):
    """Platt's threshold per group from the current gradient: G_t's KKT value -y_g (m_g + M_g)/2.

    In the plain form thr_+ = rho and thr_- = -rho (y_t G_t = rho on free variables).
    """
    m0, m1, M0, M1, i0, i1, j0, j1 = current_extremes(prob, st, ctrl, fpar)
    mid0 = midpoint(m0, M0)
    fpar[F_THR0] = -mid0
    fpar[F_THR1] = midpoint(m1, M1) if ctrl[C_NU] == 1 else mid0


@njit(cache=True)
def update_thresholds(i, j, prob, st, fpar, nu):
    """Platt's threshold update: from a free variable of the pair, else the average."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    if is_free(i, a, lower, upper):        # y G = -v
        v = -V[i]
    elif is_free(j, a, lower, upper):
        v = -V[j]
    else:
        v = -0.5 * (V[i] + V[j])
    if nu:               # within a group y is constant: the group's G value
        if y[i] > 0:
            fpar[F_THR0] = v
        else:
            fpar[F_THR1] = -v
    else:                # rho = y G on free variables
        fpar[F_THR0] = v
        fpar[F_THR1] = -v


@njit(cache=True)
def platt_pair(k1, k2, prob, st, cache, ctrl, fpar, trace):
    """takeStep(k1, k2): orient the pair (larger v goes up) and take the analytic step."""
    a, V, G_bar, perm, flags = st
    if k1 == k2:
        return UNCHANGED
    if V[k1] >= V[k2]:
        i, j = k1, k2
    else:
        i, j = k2, k1
    if not ((flags[i] & UP) and (flags[j] & LOW)):
        return UNCHANGED
    if not V[i] - V[j] > 0.0:
        return UNCHANGED
    code = update_pair(i, j, prob, st, cache, ctrl, fpar, trace, fpar[F_PLATT_EPS])
    if code == CHANGED:
        update_thresholds(i, j, prob, st, fpar, ctrl[C_NU] == 1)
    return code


@njit(cache=True)
def platt_violates(k, prob, st, fpar):
    """Platt's KKT check: r = G_k - thr; r < -tol with a_k < u_k, or r > tol with a_k > l_k."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    thr = fpar[F_THR0] if y[k] > 0 else fpar[F_THR1]
    r = -y[k] * V[k] - thr
    tol = fpar[F_PLATT_TOL]
    return (r < -tol and a[k] < upper[k]) or (r > tol and a[k] > lower[k])


@njit(cache=True)
def platt_examine(k2, prob, st, cache, ctrl, fpar, trace):
    """examineExample(k2): the second-choice heuristic, then free variables, then all."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    if not platt_violates(k2, prob, st, fpar):
        return UNCHANGED
    n = y.shape[0]
    g2 = group(k2, flags)
    E2 = -V[k2]
    best = -1.0
    k1 = -1
    for k in range(n):     # max |E1 - E2| over free variables (E = y G)
        if k != k2 and group(k, flags) == g2 and is_free(k, a, lower, upper):
            gain = abs(-V[k] - E2)
            if gain > best:
                best = gain
                k1 = k
    if k1 >= 0:
        code = platt_pair(k1, k2, prob, st, cache, ctrl, fpar, trace)
        if code != UNCHANGED:
            return code
    start = (k2 * 7919 + ctrl[C_ITER] * 104729) % n
    for only_free in (True, False):
        for t in range(n):
            k = (start + t) % n
            if group(k, flags) != g2 or (only_free and not is_free(k, a, lower, upper)):
                continue
            code = platt_pair(k, k2, prob, st, cache, ctrl, fpar, trace)
            if code != UNCHANGED:
                return code
    return UNCHANGED


@njit(cache=True)
def platt_end_of_pass(prob, st, ctrl, fpar):
    """Platt's alternation of full and non-bound passes. After a full pass without a
    significant step: OPTIMAL if m - M < tol, else the maximal-violating-pair finish."""
    if ctrl[C_P_ALL] == P_ALL and ctrl[C_P_CHANGED] == 0:
        ctrl[C_P_ALL] = P_FINISH
    elif ctrl[C_P_ALL] == P_ALL:
        ctrl[C_P_ALL] = P_FREE
    elif ctrl[C_P_CHANGED] == 0:
        ctrl[C_P_ALL] = P_ALL
        set_thresholds(prob, st, ctrl, fpar)
    ctrl[C_P_POS] = 0
    ctrl[C_P_CHANGED] = 0


@njit(cache=True)
def platt_finish(prob, st, cache, ctrl, fpar, trace):
    """One maximal-violating-pair step (or OPTIMAL): where Platt's heuristics stall short of tol."""
    m0, m1, M0, M1, i0, i1, j0, j1 = current_extremes(prob, st, ctrl, fpar)
    fpar[F_GAP] = violation(m0, m1, M0, M1)
    if fpar[F_GAP] < fpar[F_TOL]:
        return OPTIMAL
    i, j = (i0, j0) if m0 - M0 >= m1 - M1 else (i1, j1)
    return update_pair(i, j, prob, st, cache, ctrl, fpar, trace, 0.0)


@njit(cache=True)
def run_platt(prob, st, cache, ctrl, fpar, trace):
    """Platt's outer loop, resumable: its position is kept in ctrl."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    n = y.shape[0]
    capacity = trace[0].shape[0]
    ctrl[C_EXT_VALID] = 0
    while True:
        if ctrl[C_ITER] >= ctrl[C_MAX_ITER]:
            return MAX_ITER
        if ctrl[C_RECORD] == 1 and ctrl[C_TRACE_LEN] >= capacity:
            return TRACE_FULL
        if ctrl[C_P_ALL] == P_FINISH:
            code = platt_finish(prob, st, cache, ctrl, fpar, trace)
            if code == OPTIMAL or code == NEED_ROWS:
                return code
            ctrl[C_ITER] += 1
            if unbounded(ctrl, fpar):
                return UNBOUNDED
            continue
        if ctrl[C_P_POS] >= n:
            platt_end_of_pass(prob, st, ctrl, fpar)
            continue
        k = ctrl[C_P_POS]
        if ctrl[C_P_ALL] == P_ALL or is_free(k, a, lower, upper):
            code = platt_examine(k, prob, st, cache, ctrl, fpar, trace)
            if code == NEED_ROWS:
                return NEED_ROWS
            if code == CHANGED:
                ctrl[C_P_CHANGED] += 1
                ctrl[C_ITER] += 1
                if unbounded(ctrl, fpar):
                    return UNBOUNDED
        ctrl[C_P_POS] += 1


# ======================================================================================
# gradient assembly from rows (initial gradient, reconstruction), prefetch, eviction
# ======================================================================================
@njit(cache=True)
def add_rows(variables, slots, coef, store, y, index, target, start, stop, scale):
    """target_t += sum_r coef_r Q_t,variables_r for t in [start, stop), rows from ``slots``."""
    for r in range(variables.shape[0]):
        k = variables[r]
        c = coef[r] * scale * y[k]
        row = store[slots[r]]
        for t in range(start, stop):
            target[t] += y[t] * c * row[index[t]]


@njit(cache=True)
def add_point_rows(slots, coef, store, out):
    """out[c] += sum_r coef[r, c] store[slots[r]] for each column c of coef: the kernel rows of
    points (no signs, no variables), each read once from the store and summed in float64."""
    for r in range(slots.shape[0]):
        row = store[slots[r]]
        for c in range(coef.shape[1]):
            w = coef[r, c]
            if w != 0.0:
                o = out[c]
                for t in range(row.shape[0]):
                    o[t] += w * row[t]


@njit(cache=True)
def prefetch_candidates(prob, st, ctrl, fpar, slot_of, size, requested, out):
    """Up to len(out) uncached points, not in ``requested``, whose variables come closest to
    being chosen: score max over the point's active variables of v_t - m_g (t in I_up) or
    M_g - v_t (t in I_low), both <= 0. Returns how many were written, best first."""
    y, p, lower, upper, index, QD, y0, index0 = prob
    a, V, G_bar, perm, flags = st
    m0, m1, M0, M1, i0, i1, j0, j1 = current_extremes(prob, st, ctrl, fpar)
    k_max = out.shape[0]
    best = np.full(k_max, -np.inf)
    count = 0
    for k in range(size):
        point = index[k]
        if slot_of[point] >= 0:
            continue
        f = flags[k]
        v = V[k]
        score = -np.inf
        if f & UP:
            score = v - (m1 if f & NEG else m0)
        if f & LOW:
            score = max(score, (M1 if f & NEG else M0) - v)
        if count == k_max and score <= best[count - 1]:
            continue
        if _listed(point, requested, requested.shape[0]) or _listed(point, out, count):
            continue
        r = min(count, k_max - 1)                 # insert, keeping best[] sorted decreasingly
        while r > 0 and best[r - 1] < score:
            best[r] = best[r - 1]
            out[r] = out[r - 1]
            r -= 1
        best[r] = score
        out[r] = point
        count = min(count + 1, k_max)
    return count


@njit(cache=True)
def _listed(point, points, count):
    for q in range(count):
        if points[q] == point:
            return True
    return False


@njit(cache=True)
def least_recent(last_used, count, k, out):
    """The k slots among the first ``count`` with the smallest last_used, into out (distinct clocks)."""
    if k > 8:
        order = np.argsort(last_used[:count])
        out[:k] = order[:k]
        return
    least_recent_few(last_used, count, k, out)


@njit(cache=True)
def least_recent_few(last_used, count, k, out):
    """``least_recent`` by k passes over the slots (no allocation: the loop's own fill, k <= MAX_REQUESTS)."""
    for r in range(k):
        best = -1
        for s in range(count):
            if best >= 0 and last_used[s] >= last_used[best]:
                continue
            taken = False
            for q in range(r):
                if out[q] == s:
                    taken = True
                    break
            if not taken:
                best = s
        out[r] = best


@njit(cache=True)
def claim_slots(points, slots, slot_of, owner, last_used, filled, clock):
    """Slots for the rows of ``points``: never-filled slots first, then the least recently used;
    the evicted rows are forgotten and the new ones marked used. Returns the new clock.

    ``filled[0]`` counts the slots filled so far (slots fill in order).
    """
    old = filled[0]
    fresh = fresh_slots(slots, owner, filled)
    if points.shape[0] > fresh:
        least_recent(last_used, old, points.shape[0] - fresh, slots[fresh:])
    return assign_slots(points, slots, slot_of, owner, last_used, clock)


@njit(cache=True)
def fresh_slots(slots, owner, filled):
    """``claim_slots``'s never-filled slots, the first of ``slots`` (as many as there are); how many."""
    old = filled[0]
    fresh = min(slots.shape[0], owner.shape[0] - old)
    for r in range(fresh):
        slots[r] = old + r
    filled[0] = old + fresh
    return fresh


@njit(cache=True)
def assign_slots(points, slots, slot_of, owner, last_used, clock):
    """``claim_slots``'s last part: ``slots`` now hold the rows of ``points``, just used; the new clock."""
    for r in range(points.shape[0]):
        s = slots[r]
        if owner[s] >= 0:
            slot_of[owner[s]] = -1
        owner[s] = points[r]
        slot_of[points[r]] = s
        last_used[s] = clock
        clock += 1
    return clock


@njit(cache=True, inline="always")
def fill_here(prob, st, cache, ctrl, fpar):
    """Compute the requested full rows in the loop, as the caller's fill would (``smo._Run._fetch_rows``,
    with one guessed row at most, ``guess_partner``; ``C_FILL_HERE``: float32 RBF rows of a dense X, no
    diagonal term), the same values bit for bit.

    The rows of waiting bound changes are kept (or applied first, where keeping them would leave
    fewer than PINNED_ROWS slots for the step), the least recently used slots are claimed, and each row is
    the exponents of ``rbf_exponents`` and their exp (``exp32_inplace``): their loops, ``_rbf_rows`` and
    ``_exp32``. A return to the caller and back
    costs about 50 us, the time of two or three such rows at N = 5,000, D = 20.
    """
    (store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd,
     owner, filled, Xt, sums, fill_slots) = cache
    k = ctrl[C_NREQ]
    if k == 1 and guess_partner(prob[4], slot_of, owner, filled, ctrl):
        k = 2
    if ctrl[C_NPEND] > 0:
        if k + ctrl[C_NPEND] + PINNED_ROWS < owner.shape[0]:
            protect_pending(cache, ctrl)
        else:
            flush_G_bar(prob, st, cache, ctrl)
    points = ctrl[C_REQ:C_REQ + k]
    slots = fill_slots[:k]
    old = filled[0]                       # claim_slots, with no allocation
    fresh = fresh_slots(slots, owner, filled)
    if k > fresh:
        least_recent_few(last_used, old, k - fresh, slots[fresh:])
    ctrl[C_CLOCK] = assign_slots(points, slots, slot_of, owner, last_used, ctrl[C_CLOCK])
    _rbf_rows(Xt, points, fpar[F_GAMMA], store, slots, sums)
    for r in range(k):
        _exp32(store[slots[r]])
    ctrl[C_NREQ] = 0
    ctrl[C_ROWS_FILLED] += k


@njit(cache=True, inline="always")
def guess_partner(index, slot_of, owner, filled, ctrl):
    """Add to a request of one row (the first-order partner's, ctrl[C_J0]: in the plain form the most
    violating variable of I_low, which the second-order rule often picks as j once i's row is at hand) where
    its row is missing too and a never-filled slot holds it (a guess evicts nothing); whether it did.
    Two rows cost the distance loop 1.4 times one (``rbf_exponents`` reads the inputs once for both)."""
    if ctrl[C_NU] == 1 or ctrl[C_COMPACT] == 1 or ctrl[C_EXT_VALID] == 0 or ctrl[C_J0] < 0:
        return False
    partner = index[ctrl[C_J0]]
    if slot_of[partner] >= 0 or partner == ctrl[C_REQ] or filled[0] + 2 > owner.shape[0]:
        return False
    ctrl[C_REQ + 1] = partner
    ctrl[C_NREQ] = 2
    return True


# ======================================================================================
# RBF rows for the float32 cache
# ======================================================================================
#: columns per chunk of rbf_exponents: its two rows' float32 sums stay in L1
RBF_CHUNK = 1024


#: exp_inplace: x = k ln 2 + r (Cody and Waite's two-part ln 2), |r| <= ln(2) / 2, exp(r) by its Taylor
#: polynomial of degree 13 (the first term left out is r^14 / 14! < 3e-18), times 2^k built from its bits
EXP_LOG2E = 1.4426950408889634
EXP_LN2_HI = 6.93147180369123816490e-01
EXP_LN2_LO = 1.90821492927058770002e-10
EXP_C = tuple(1.0 / math.factorial(k) for k in range(14))
EXP_SHIFTER = 6755399441055744.0                      # 1.5 * 2^52: k + SHIFTER holds k in its low bits
EXP_SHIFTER_BITS = 0x4338000000000000                 # the bits of SHIFTER
EXP_LOW = -708.0                                      # exp(x) is 0 below: 2^k stays a normal number
EXP_CHUNK = 1024
#: fused multiply-adds and no signed zeros; not "nnan" or "ninf" (as fast here), so that -inf gives 0
EXP_FASTMATH = {"nsz", "contract"}


@njit(cache=True, fastmath=EXP_FASTMATH)
def exp_inplace(x):
    """x[:] = exp(x) for kernel exponents (x <= 709, -inf included): within one unit in the last place of
    numpy's exp, except that exp(x) for x < -708 (below 3.3e-308, near the subnormals) is 0, as is a NaN's.

    numpy's float64 exp is a scalar loop on CPUs without AVX-512 (about
    5.5 ns an entry here); this one runs on SIMD lanes (about 2.3 ns): the
    reduction x = k ln 2 + r and the polynomial in one pass, the scale 2^k,
    built from k's bits, in another, a chunk of EXP_CHUNK entries at a time.
    """
    k_shifted = np.empty(EXP_CHUNK)
    n = x.shape[0]
    for start in range(0, n, EXP_CHUNK):        # the chunk and k in L1 between the two passes
        stop = min(n, start + EXP_CHUNK)
        _exp_reduced(x[start:stop], k_shifted[: stop - start])
        _exp_scale(x[start:stop], k_shifted[: stop - start])


@njit(cache=True, fastmath=EXP_FASTMATH)
def _exp_reduced(x, k_shifted):
    """x[:] = exp(r) (0 where x < EXP_LOW) and k_shifted[:] = k + EXP_SHIFTER, for x = k ln 2 + r."""
    c0_, c1_, c2_, c3_, c4_, c5_, c6_ = EXP_C[0], EXP_C[1], EXP_C[2], EXP_C[3], EXP_C[4], EXP_C[5], EXP_C[6]
    c7_, c8_, c9_, c10_, c11_, c12_, c13_ = EXP_C[7], EXP_C[8], EXP_C[9], EXP_C[10], EXP_C[11], EXP_C[12], EXP_C[13]
    for i in range(x.shape[0]):
        u = x[i]
        v = u if u > EXP_LOW else EXP_LOW
        k = math.floor(v * EXP_LOG2E + 0.5)
        r = (v - k * EXP_LN2_HI) - k * EXP_LN2_LO
        k_shifted[i] = k + EXP_SHIFTER
        p = ((((((((((((c13_ * r + c12_) * r + c11_) * r + c10_) * r + c9_) * r + c8_) * r + c7_) * r + c6_)
               * r + c5_) * r + c4_) * r + c3_) * r + c2_) * r + c1_) * r + c0_
        x[i] = p if u > EXP_LOW else 0.0


@njit(cache=True, fastmath=EXP_FASTMATH)
def _exp_scale(x, k_shifted):
    """x[:] = x 2^k, k read from the bits of k + EXP_SHIFTER (and 2^k's bits written over them)."""
    bits = k_shifted.view(np.int64)
    for i in range(x.shape[0]):
        bits[i] = (bits[i] - EXP_SHIFTER_BITS + 1023) << 52
    for i in range(x.shape[0]):
        x[i] *= k_shifted[i]


#: exp32_inplace: x = k ln 2 + r with ln 2 in two parts (Cephes': the first exact in float32), |r| <= ln(2) / 2,
#: exp(r) by its Taylor polynomial of degree 7 in float32 (the first term left out, r^8 / 8!, is 5e-9 of it,
#: a tenth of a unit in the last place), 2^k in two factors (each a normal float32 down to k = -150)
EXP32_LOG2E = np.float32(1.4426950408889634)
EXP32_LN2_HI = np.float32(0.693359375)
EXP32_LN2_LO = np.float32(-2.12194440e-4)
EXP32_C = tuple(np.float32(1.0 / math.factorial(k)) for k in range(8))
EXP32_SHIFTER = np.float32(12582912.0)               # 1.5 * 2^23: k + SHIFTER holds k in its low bits
EXP32_LOW = np.float32(-103.0)                        # exp(x) is 0 below (under half the smallest subnormal)


@intrinsic
def _float32_of_bits(typingctx, bits):
    """The float32 whose bits are the int32 ``bits`` (LLVM's bitcast: a SIMD lane's move, no memory)."""
    if bits != types.int32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float32))
    return types.float32(types.int32), codegen


@njit(cache=True)
def exp32_inplace(x):
    """x[:] = exp(x) for a float32 row of RBF exponents (x <= 88): within one unit in the last place of the
    correctly rounded value (equal to it on 94% of a grid over [-110, 0]; numpy's float32 exp, within two,
    on 68%), subnormals where they are due and 0 below EXP32_LOW, as for a NaN.

    In float32 throughout and in one pass on SIMD lanes (about 0.65 ns an entry, numpy's 0.6), allocating
    nothing: the rows of the SMO's loop (``fill_here``) and of the caller's fill (``KernelRowCache.fill``)
    alike, so that a row is the same whoever computes it. (The loop calls ``_exp32``, which its float64
    build also compiles, for rows it never fills: the export keeps the one signature of ``_aot``.)
    """
    _exp32(x)


@njit(cache=True, fastmath=EXP_FASTMATH)
def _exp32(x):
    """``exp32_inplace``'s loop."""
    c0_, c1_, c2_, c3_, c4_, c5_, c6_, c7_ = (EXP32_C[0], EXP32_C[1], EXP32_C[2], EXP32_C[3], EXP32_C[4],
                                              EXP32_C[5], EXP32_C[6], EXP32_C[7])
    for i in range(x.shape[0]):
        u = x[i]
        v = u if u > EXP32_LOW else EXP32_LOW
        k = (v * EXP32_LOG2E + EXP32_SHIFTER) - EXP32_SHIFTER       # round(v / ln 2)
        r = (v - k * EXP32_LN2_HI) - k * EXP32_LN2_LO
        p = ((((((c7_ * r + c6_) * r + c5_) * r + c4_) * r + c3_) * r + c2_) * r + c1_) * r + c0_
        n = np.int32(k)
        half = n >> 1
        low = _float32_of_bits(np.int32((half + 127) << 23))       # 2^half, 2^(n - half): normal floats
        high = _float32_of_bits(np.int32((n - half + 127) << 23))
        x[i] = (p * low) * high if u > EXP32_LOW else np.float32(0.0)


@njit(cache=True, fastmath=True)
def rbf_exponents(Xt, points, gamma, store, slots, acc):
    """store[slots_r, c] = -gamma ||x_{points_r} - x_c||^2 from the float32 inputs Xt (D, N); ``acc``
    holds 2 RBF_CHUNK float32 sums.

    Differences, squares and sums in float32 (sixteen lanes): no cancellation,
    so the relative error of the squared distance is a few float32 roundings
    and the kernel value's absolute error about 1e-7, next to the 3e-8 of
    storing it in float32; the caller takes exp in place. Two rows at a time,
    four features at a time: each chunk of Xt is read once for two rows and
    each sum updated once for four features (1.8 times faster than a row and
    a feature at a time at N = 5,000, D = 20).
    """
    _rbf_rows(Xt, points, gamma, store, slots, acc)


@njit(cache=True, fastmath=True)
def _rbf_rows(Xt, points, gamma, store, slots, acc):
    """``rbf_exponents``'s loop (``fill_here`` calls it: its float64 build compiles it for rows it never fills,
    and the export keeps the one signature of ``_aot``)."""
    R = points.shape[0]
    for r in range(0, R - 1, 2):
        _two_rows(Xt, points[r], points[r + 1], gamma, store[slots[r]], store[slots[r + 1]], acc)
    if R % 2:
        _one_row(Xt, points[R - 1], gamma, store[slots[R - 1]], acc)


@njit(cache=True, fastmath=True)
def _one_row(Xt, p, gamma, out, acc):
    D, N = Xt.shape
    D4 = D - D % 4
    for c0 in range(0, N, RBF_CHUNK):
        n = min(RBF_CHUNK, N - c0)
        a = acc[:n]
        a[:] = 0.0
        for d in range(0, D4, 4):
            x0, x1, x2, x3 = Xt[d, p], Xt[d + 1, p], Xt[d + 2, p], Xt[d + 3, p]
            r0, r1, r2, r3 = Xt[d, c0:c0 + n], Xt[d + 1, c0:c0 + n], Xt[d + 2, c0:c0 + n], Xt[d + 3, c0:c0 + n]
            for c in range(n):
                e0, e1, e2, e3 = r0[c] - x0, r1[c] - x1, r2[c] - x2, r3[c] - x3
                a[c] += (e0 * e0 + e1 * e1) + (e2 * e2 + e3 * e3)
        for d in range(D4, D):
            xd = Xt[d, p]
            row = Xt[d, c0:c0 + n]
            for c in range(n):
                e = row[c] - xd
                a[c] += e * e
        o = out[c0:c0 + n]
        for c in range(n):
            o[c] = -gamma * a[c]


@njit(cache=True, fastmath=True)
def _two_rows(Xt, p, q, gamma, out_p, out_q, acc):
    D, N = Xt.shape
    D4 = D - D % 4
    for c0 in range(0, N, RBF_CHUNK):
        n = min(RBF_CHUNK, N - c0)
        a, b = acc[:n], acc[RBF_CHUNK:RBF_CHUNK + n]
        a[:] = 0.0
        b[:] = 0.0
        for d in range(0, D4, 4):
            x0, x1, x2, x3 = Xt[d, p], Xt[d + 1, p], Xt[d + 2, p], Xt[d + 3, p]
            y0, y1, y2, y3 = Xt[d, q], Xt[d + 1, q], Xt[d + 2, q], Xt[d + 3, q]
            r0, r1, r2, r3 = Xt[d, c0:c0 + n], Xt[d + 1, c0:c0 + n], Xt[d + 2, c0:c0 + n], Xt[d + 3, c0:c0 + n]
            for c in range(n):
                e0, e1, e2, e3 = r0[c] - x0, r1[c] - x1, r2[c] - x2, r3[c] - x3
                a[c] += (e0 * e0 + e1 * e1) + (e2 * e2 + e3 * e3)
                f0, f1, f2, f3 = r0[c] - y0, r1[c] - y1, r2[c] - y2, r3[c] - y3
                b[c] += (f0 * f0 + f1 * f1) + (f2 * f2 + f3 * f3)
        for d in range(D4, D):
            xd, yd = Xt[d, p], Xt[d, q]
            row = Xt[d, c0:c0 + n]
            for c in range(n):
                e, f = row[c] - xd, row[c] - yd
                a[c] += e * e
                b[c] += f * f
        o, w = out_p[c0:c0 + n], out_q[c0:c0 + n]
        for c in range(n):
            o[c] = -gamma * a[c]
            w[c] = -gamma * b[c]


# ======================================================================================
# what Python calls (the exports of the ahead-of-time build, see _aot and _smo_loops)
# ======================================================================================
ENTRY_POINTS = ("set_flags", "extremes", "violation", "set_thresholds", "restore_order", "prefetch_candidates",
                "leave_compact", "protect_pending", "flush_G_bar", "run_smo", "run_platt", "add_rows",
                "add_point_rows", "claim_slots", "rbf_exponents", "exp_inplace", "exp32_inplace")
