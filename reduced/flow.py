"""Gradient flow of a reduced setting, the eta -> 0 limit of its GD recurrence, solved by diffrax.

A setting gives the vector field dy/dt = -(GD increment)/eta, in units t = eta * steps: GD's step k
sits at t = eta k and converges to the flow as eta -> 0 with an O(eta) error. This module holds what
every setting shares: option checks, save times, the diffrax call, the observation of the saves and
the mapping of times to GD steps.

Solver: an adaptive, implicit (stiff-capable) ESDIRK method of diffrax (default Kvaerno4) with a PI
step-size controller; rtol and atol are traced arguments of the compiled solve, so changing them
does not recompile. The flow is stiff: the step sizes of alpha and rho differ by D(D-C), and an
explicit method (Tsit5) is held to stability-limited steps (it exhausted 200,000 steps before t =
1e6 at D=16, C=4, where Kvaerno4 needs ~300).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from typing import Callable, Optional, Sequence

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from dynsim import progress, recording
from dynsim.validation import is_int, is_real, shown

METHODS = ("gd", "flow")
SOLVERS = {
    "kvaerno4": diffrax.Kvaerno4,
    "kvaerno5": diffrax.Kvaerno5,
    "kvaerno3": diffrax.Kvaerno3,
    "tsit5": diffrax.Tsit5,
}
# scipy.integrate's LSODA, stepped from the host on jit-compiled f and Jacobian (`solve_host`): no
# solver trace to compile, and its variable-order BDF with few Jacobians needed a third of
# Kvaerno4's evaluations on JSL (docs/flow.md)
HOST_SOLVERS = {"lsoda": "LSODA", "bdf": "BDF"}
SOLVER = "kvaerno4"
RTOL, ATOL = 1e-6, 1e-9
# (pcoeff, icoeff) of diffrax.PIDController: a PI controller for mildly stiff problems
PI_COEFFICIENTS = (0.2, 0.4)
SAVES = 100  # log-spaced save times in [t_min, t_max], besides t = 0
# the most log-spaced saves: each is one record of every observable, all held in memory at once
# (padded to a power of two: `traced_options`); 2^20 is 500 times the largest flow of docs/ (2,000
# saves) and refuses a count whose times alone would not fit in memory (more: give `times`)
MAX_SAVES = 2**20
MAX_STEPS = 100_000
# the largest step budget: diffrax counts its steps in an int32 when JAX runs without x64 (a
# float32 run), and a max_steps past 2^31 - 1 overflows that counter
MAX_SOLVER_STEPS = 2**31 - 1
# the latest end time, in GD steps: each save is stored at the GD step round(t / eta) (`steps_of`),
# an integer float64 holds exactly only up to 2^53 (past it, neighbouring steps are one float and
# a save's step is not determined; past 2^63 it does not fit a Trajectory's int64 steps at all);
# so t_max <= eta * 2^53
MAX_FLOW_STEPS = 2**53
# meta["approximation"]: the checker compares a flow with GD as an approximation
LABEL = "gradient_flow"
# what a flow's progress counts (`dynsim.progress.report`): the save times reached
UNIT = "save times"


def check_method(method) -> str:
    """method, if it is "gd" or "flow"."""
    if method not in METHODS:
        raise ValueError(
            f"method = {method!r} is invalid: must be one of {', '.join(map(repr, METHODS))}"
        )
    return method


@dataclasses.dataclass(frozen=True)
class Flow:
    """The gradient flow's options, checked on construction (one line naming the field: a TypeError
    for a wrong type, a ValueError for a value out of range): the end time t_max (None: eta *
    steps, set by `resolved`), the save times (explicit `times` in [0, t_max], else t = 0 and
    `saves` (at most MAX_SAVES) log-spaced times from t_min, default min(eta, t_max), to t_max),
    the step-size tolerances rtol and atol, the solver (None: the setting's) and its step budget
    max_steps (at most MAX_SOLVER_STEPS)."""

    t_max: Optional[float] = None
    saves: int = SAVES
    t_min: Optional[float] = None
    times: Optional[Sequence[float]] = None
    rtol: float = RTOL
    atol: float = ATOL
    solver: Optional[str] = None
    max_steps: int = MAX_STEPS

    def __post_init__(self):
        if self.t_max is not None:
            _positive("t_max", self.t_max)
        _positive("rtol", self.rtol)
        _positive("atol", self.atol)
        if self.solver is not None:
            if not isinstance(self.solver, str):
                raise TypeError(f"solver must be text or None, got {type(self.solver).__name__}")
            if self.solver not in (*SOLVERS, *HOST_SOLVERS):
                raise ValueError(
                    f"solver = {self.solver!r} is invalid: must be one of "
                    f"{', '.join(map(repr, [*SOLVERS, *HOST_SOLVERS]))}"
                )
        _count("max_steps", self.max_steps, MAX_SOLVER_STEPS, " (diffrax's int32 step counter)")
        _count("saves", self.saves, MAX_SAVES, " (each a record held in memory; or give times)")
        if self.times is None:
            if self.t_min is not None:
                _positive("t_min", self.t_min)
        elif self.t_min is not None:
            raise ValueError("t_min is invalid together with times: give one of them")
        else:
            _check_times(self.times)

    def resolved(self, eta: float, default_t_max: float, default_solver: str = SOLVER) -> dict:
        """The options of one run at rate eta: {"t_max", "times" (the save times, numpy), "rtol",
        "atol", "solver", "max_steps"}, with t_max = `default_t_max` (eta * steps) and the solver
        `default_solver` where not given."""
        t_max = default_t_max if self.t_max is None else self.t_max
        _positive("t_max", t_max)  # eta * steps is 0 at steps = 0
        t_max = float(t_max)
        check_horizon("t_max", t_max, eta)
        if self.times is None:
            t_min = min(eta, t_max) if self.t_min is None else self.t_min
            if t_min > t_max:
                raise ValueError(f"t_min = {t_min!r} is invalid: must be <= t_max = {t_max!r}")
            ts = save_times(t_max, self.saves, float(t_min))
        else:
            ts = np.asarray(self.times, dtype=float)
            if (
                ts.ndim != 1
                or ts.size < 1
                or not np.all(np.isfinite(ts))
                or ts[0] < 0
                or ts[-1] > t_max
                or np.any(np.diff(ts) <= 0)
            ):
                raise ValueError(
                    f"times = {_short(self.times)} is invalid: must be a non-empty increasing 1-d "
                    f"sequence of finite times in [0, t_max = {t_max!r}]"
                )
        return {
            "t_max": t_max,
            "times": ts,
            "rtol": float(self.rtol),
            "atol": float(self.atol),
            "solver": default_solver if self.solver is None else self.solver,
            "max_steps": int(self.max_steps),
        }


def check_horizon(name: str, t_max: float, eta: float) -> None:
    """Refuse an end time past MAX_FLOW_STEPS GD steps of rate eta (its saves' steps would not be
    determined)."""
    if not t_max / eta <= MAX_FLOW_STEPS:
        raise ValueError(
            f"{name} = {t_max!r} is invalid: must be at most eta * 2^53 = "
            f"{eta * MAX_FLOW_STEPS:.6g} (eta = {eta!r}): each save is stored at the GD step "
            "round(t / eta), which float64 holds exactly only up to 2^53"
        )


def save_times(t_max: float, saves: int, t_min: float) -> np.ndarray:
    """t = 0, then `saves` log-spaced times from t_min to t_max (t_max exactly last)."""
    logs = (
        np.linspace(math.log(t_min), math.log(t_max), saves)
        if saves > 1
        else np.array([math.log(t_max)])
    )
    ts = np.exp(logs)
    ts[-1] = t_max
    return np.unique(np.concatenate([[0.0], ts]))


def gd_times(
    eta: float, steps: int, record_every: int, t_max: float, saves: int = SAVES
) -> np.ndarray:
    """Save times that line up with a GD run's records: eta * (recorded step) up to t_max; beyond
    the GD run's end (t_max > eta * steps) `saves` log-spaced times up to t_max. What `dynsim
    compare ... --method flow` uses."""
    ts = eta * recording.recorded_steps(steps, record_every).astype(float)
    ts = ts[ts <= t_max]
    end = eta * steps
    if t_max > end:
        tail = save_times(t_max, saves, max(end, eta))
        ts = np.concatenate([ts, tail[tail > end * (1 + 1e-12)]])
    elif ts[-1] < t_max:
        ts = np.append(ts, t_max)
    return np.unique(ts)


def integrate(vector_field: Callable, y0, args, ts, t_max, rtol, atol, solver: str, max_steps: int):
    """Solve dy/dt = vector_field(t, y, args) from t = 0 to t_max, saving at ts (traceable; rtol,
    atol, t_max, ts may be traced). Returns (ys, stats, result) of `diffrax.diffeqsolve`
    (throw=False: the caller reports)."""
    dtype = jax.tree.leaves(y0)[0].dtype
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(vector_field),
        SOLVERS[solver](),
        jnp.asarray(0.0, dtype),
        jnp.asarray(t_max, dtype),
        None,
        y0,
        args=args,
        saveat=diffrax.SaveAt(ts=jnp.asarray(ts, dtype)),
        stepsize_controller=diffrax.PIDController(
            rtol=rtol, atol=atol, pcoeff=PI_COEFFICIENTS[0], icoeff=PI_COEFFICIENTS[1]
        ),
        max_steps=max_steps,
        throw=False,
    )
    return sol.ys, sol.stats, sol.result


def isolated(fn: Callable, jvp: Callable, like, ts, t_max) -> Callable:
    """The vector field y -> fn(y) as diffrax calls it, with XLA compiling fn (and its JVP) once, on
    its own.

    Inlined into the solver's loop, the sympy-lambdified gradient expression appears in every stage,
    the Newton iteration and the Jacobian, and XLA's passes over that loop body take far longer than
    over the expression alone (docs/benchmarks.md §l). Here the loop calls it through
    `jax.pure_callback`; a `custom_jvp` gives the solver's Jacobian (`jax.jacfwd`, one JVP per state
    entry) through a second callback. fn, jvp: host callables of jit-compiled functions (y -> dy/dt
    and (y, v) -> J(y) v); like: a pytree with y's shapes and dtypes. The field's callback also
    reports the save times `ts` (padded to t_max, `traced_options`) that t has passed
    (`dynsim.progress.report`, in UNIT): the flow's progress and its Ctrl-C checks.
    """
    spec = jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), like)

    def host(y, reached, saves):
        progress.report(reached, saves, UNIT)
        return fn(y)

    @jax.custom_jvp
    def f(y, reached, saves):
        return jax.pure_callback(host, spec, y, reached, saves)

    @f.defjvp
    def f_jvp(primals, tangents):
        y, v = primals[0], tangents[0]  # autonomous: the field does not move with t
        return f(*primals), jax.pure_callback(jvp, spec, y, v, vmap_method="sequential")

    saves = jnp.argmax(ts >= t_max) + 1  # the save times before the padding
    return lambda t, y, args: f(y, jnp.minimum(jnp.sum(ts <= t), saves), saves)


def traced_options(opts: dict, dtype) -> tuple:
    """(ts, t_max, rtol, atol) as arrays: traced arguments of a compiled solve (no recompilation
    when they change).

    ts is padded with t_max to a power of two (>= 128) so that different numbers of save times share
    one compiled solve; `finish` drops the padding."""
    ts = opts["times"]
    size = max(128, 1 << (ts.size - 1).bit_length())
    ts = np.concatenate([ts, np.full(size - ts.size, opts["t_max"])])
    return (jnp.asarray(ts, dtype),) + tuple(
        jnp.asarray(opts[k], dtype) for k in ("t_max", "rtol", "atol")
    )


def observe_saves(observe: Callable, ys, ts, t_max, reached):
    """lax.map of observe over the saved states; the padding of `traced_options` (every save after
    the first at t_max) and the saves not reached are skipped at run time (lax.cond) and read as
    observe's shapes of zeros."""
    live = (jnp.arange(ts.shape[0]) <= jnp.argmax(ts >= t_max)) & reached
    y0 = jax.tree.map(lambda y: y[0], ys)
    shapes = jax.eval_shape(observe, y0)

    def one(args):
        y, on = args
        return jax.lax.cond(
            on, observe, lambda y: jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes), y
        )

    return jax.lax.map(one, (ys, live))


def steps_of(times: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """GD step numbers of the save times, round(t / eta), and which saves to keep: of several times
    rounding to the same step, the one nearest eta * step (so a Trajectory's steps are unique)."""
    steps = np.rint(times / eta).astype(np.int64)
    off = np.abs(times - eta * steps)
    keep = np.ones(times.shape, bool)
    for s in np.unique(steps[np.r_[False, steps[1:] == steps[:-1]]]):
        where = np.flatnonzero(steps == s)
        keep[where] = False
        keep[where[np.argmin(off[where])]] = True
    return steps[keep], keep


def finish(
    records: dict, reached, opts: dict, stats, result, eta: float
) -> tuple[np.ndarray, dict, dict]:
    """Host side after a solve: the GD steps, the kept records (plus the time "t") and the flow's
    meta entries.

    `reached` marks the saves the solver got to. If it stopped early (max_steps, or a step-size
    collapse), the others are dropped and a RuntimeWarning says where it stopped."""
    times = opts["times"]
    # without the padding of traced_options
    records = {k: np.asarray(v)[: times.size] for k, v in records.items()}
    reached = np.cumprod(np.asarray(reached)[: times.size]).astype(bool)
    host = opts["solver"] in HOST_SOLVERS
    message = result if host else str(diffrax.RESULTS[result])
    ok = message == "successful" if host else bool(result == diffrax.RESULTS.successful)
    extra: dict = {}
    if not ok:
        last = float(times[reached][-1]) if reached.any() else 0.0
        extra["stopped_at_time"] = last
        warnings.warn(
            f"the flow solver stopped before t_max = {opts['t_max']:g} (last saved time {last:g}): "
            f"{message} Raise max_steps (now {opts['max_steps']}) or loosen rtol/atol.",
            RuntimeWarning,
            stacklevel=3,
        )
    records = {k: v[reached] for k, v in records.items()}
    steps, keep = steps_of(times[reached], eta)
    records = {k: v[keep] for k, v in records.items()}
    records["t"] = times[reached][keep]
    meta = {
        "method": "flow",
        "approximation": LABEL,
        "solver": f"scipy.integrate.{HOST_SOLVERS[opts['solver']]}"
        if host
        else f"diffrax.{SOLVERS[opts['solver']].__name__}",
        "stepsize_controller": "the solver's own"
        if host
        else f"PIDController(pcoeff={PI_COEFFICIENTS[0]}, icoeff={PI_COEFFICIENTS[1]})",
        "rtol": opts["rtol"],
        "atol": opts["atol"],
        "t_max": opts["t_max"],
        "max_steps": opts["max_steps"],
        "solver_steps": int(stats["num_steps"]),
        # a host solver counts its steps but not its rejected attempts
        "solver_accepted_steps": None if host else int(stats["num_accepted_steps"]),
        "solver_rejected_steps": None if host else int(stats["num_rejected_steps"]),
        **{
            k: int(v)
            for k, v in stats.items()
            if k in ("evaluations", "jacobians", "lu_decompositions")
        },
        "solver_result": "successful" if ok else message,
        "times": records["t"].tolist(),
        "time_units": "t = eta * steps; steps = round(t / eta), the GD step nearest in time "
        "(exact t in 't')",
        **extra,
    }
    return steps, records, meta


def check_flow(method, t_max) -> None:
    """Refuse the flow's options with method="gd": they belong to method="flow"."""
    if check_method(method) == "gd":
        raise ValueError(
            f"t_max = {t_max!r} and the flow options (saves, t_min, times, rtol, atol, solver, "
            f"max_steps) "
            "are invalid with method = 'gd': they belong to method = 'flow'"
        )


def static(cfg):
    """cfg without what the flow does not depend on (`FLOW_IGNORES` of its class): one compiled
    solve serves all."""
    return cfg.replace(**type(cfg).FLOW_IGNORES)


def solve(
    fn: Callable,
    jvp: Callable,
    y0,
    observe: Callable,
    ts,
    t_max,
    rtol,
    atol,
    solver: str,
    max_steps: int,
):
    """Integrate the vector field `fn` (`isolated`, host callables) from y0 and observe the saves;
    traceable.

    A save is reached when the first leaf of its state is finite (diffrax fills the saves after a
    stop with inf); the others stand at y0 and are dropped by `finish`. Returns (records, reached,
    states, stats, result).
    """
    f = isolated(fn, jvp, y0, ts, t_max)
    ys, stats, result = integrate(f, y0, None, ts, t_max, rtol, atol, solver, max_steps)
    first = jax.tree.leaves(ys)[0]
    reached = jnp.all(jnp.isfinite(first.reshape(first.shape[0], -1)), axis=1)
    safe = jax.tree.map(
        lambda y, y0: jnp.where(reached.reshape((-1,) + (1,) * jnp.ndim(y0)), y, y0), ys, y0
    )
    return observe_saves(observe, safe, ts, t_max, reached), reached, safe, stats, result


def solve_host(
    fn: Callable,
    jac: Callable,
    y0: np.ndarray,
    ts: np.ndarray,
    t_max: float,
    rtol: float,
    atol: float,
    solver: str,
    max_steps: int,
):
    """Integrate dy/dt = fn(y) (a flat float64 vector) with scipy.integrate's `solver` and the
    Jacobian `jac(y)`, stepped here so that max_steps holds and each step reports the save times
    reached (`dynsim.progress.report`: the bar, and Ctrl-C between steps); saves at ts by each
    step's interpolant.

    Returns (ys (len(ts), n), reached (len(ts),), stats, result): result "successful" or scipy's
    message."""
    import scipy.integrate  # only the host solvers need scipy

    counts = {"evaluations": 0, "jacobians": 0}

    def f(t, y):
        counts["evaluations"] += 1
        return np.asarray(fn(y))

    def J(t, y):
        counts["jacobians"] += 1
        return np.asarray(jac(y))

    method = getattr(scipy.integrate, HOST_SOLVERS[solver])
    ode = method(f, 0.0, np.asarray(y0, float), t_max, rtol=rtol, atol=atol, jac=J)
    ys = np.tile(np.asarray(y0, float), (len(ts), 1))
    reached = ts <= 0
    i, steps, result = int(reached.sum()), 0, "successful"
    while i < len(ts):
        if steps >= max_steps:
            result = f"max_steps = {max_steps} reached at t = {ode.t:g}."
            break
        message = ode.step()
        steps += 1
        if ode.status == "failed":
            result = f"{message} (t = {ode.t:g})."
            break
        done = ts <= ode.t
        if np.any(done[i:]):
            upto = int(np.flatnonzero(done)[-1]) + 1
            ys[i:upto] = ode.dense_output()(ts[i:upto]).T
            reached[i:upto] = True
            i = upto
        progress.report(i, len(ts), UNIT)  # after the first step: f and J are compiled
    stats = {"num_steps": steps, **counts, "lu_decompositions": getattr(ode, "nlu", 0)}
    return ys, reached, stats, result


def _positive(name: str, value) -> None:
    """TypeError unless `value` is a real number (not a bool); ValueError unless finite and > 0."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not is_real(value) or value <= 0:
        raise ValueError(f"{name} = {shown(value)} is invalid: must be a finite real number > 0")


def _count(name: str, value, high: int, why: str) -> None:
    """TypeError unless `value` is an integer (not a bool); ValueError outside [1, high]."""
    if not is_int(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not 1 <= value <= high:
        raise ValueError(
            f"{name} = {shown(value)} is invalid: must be an integer in [1, {high:,}]{why}"
        )


def _check_times(times) -> None:
    """TypeError unless `times` is a sequence of real numbers (their count is the caller's: the
    times are already in memory); their order and range are checked against t_max when
    resolved."""
    try:
        kind = np.asarray(times).dtype.kind
    except ValueError:  # a ragged nesting
        kind = "O"
    if isinstance(times, (str, bytes)) or kind not in "iuf":
        raise TypeError(f"times must be a sequence of real numbers, got {type(times).__name__}")


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."
