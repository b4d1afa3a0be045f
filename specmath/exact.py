"""The exact interpreter: every branch of a sampling program, weighted with Fractions.

How it works.

1. *One attempt* of a program call is explored depth-first by replay: the generator is re-run
   from the start with a prescribed list of answers, and at the first unanswered request each of
   its branches (answer, probability) is pushed. A leaf ends with an outcome, RESTART or Recur.
2. Program calls reached through RESTART/Recur are states of an absorbing Markov chain. For state
   i, with T[i][j] the probability that one attempt of i continues as j, A[i][x] the probability
   that it returns x, and C[i][c] the expected cost c of one attempt,

       h_i(x) = A[i][x] + sum_j T[i][j] h_j(x)         (law of the final outcome)
       k_i(c) = C[i][c] + sum_j T[i][j] k_j(c)         (expected total cost)

   i.e. (I - T) h = A and (I - T) k = C, solved by Gaussian elimination over the rationals.
   For a plain restart loop (one state, T = r) this is the familiar h = A / (1 - r).
3. The answer is exact or it is an error: a program that does not halt with probability 1, whose
   attempt is deeper than ``max_depth`` requests, or whose chain does not close within
   ``max_states`` states raises ``NotExactError``. Nothing is truncated silently.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from specmath.laws import Law
from specmath.program import RESTART, Coin, Draw, Recur, Tick, branches

__all__ = ["NotExactError", "Limits", "ExactResult", "Path", "exact", "exact_paths", "exact_symbolic"]


class NotExactError(ValueError):
    """The program's law cannot be computed exactly (it may not halt, or exceeds the limits)."""


@dataclass(frozen=True)
class Limits:
    """Guards that turn a runaway exploration into a clear error instead of a hang."""

    max_depth: int = 100_000  # requests in one attempt
    max_leaves: int = 5_000_000  # leaves explored in one attempt
    max_states: int = 20_000  # distinct program calls reached by RESTART / Recur


@dataclass(frozen=True)
class Path:
    """One leaf of one attempt: the answers on the way, its probability, and how it ended."""

    steps: tuple  # ((label, answer), ...)
    probability: Any
    end: Any  # the outcome, RESTART, or a Recur
    costs: tuple  # ((label, amount), ...)


@dataclass
class ExactResult:
    """The exact law of a program's outcome and its exact expected costs."""

    law: Law
    expected_costs: dict[str, Fraction]
    attempt_restart_probability: Fraction  # P(first attempt ends in RESTART/Recur)
    states: int  # program calls in the Markov chain (1 for a loop-free or plain restart program)
    raw: dict = field(default_factory=dict, repr=False)

    def expected_cost(self, label: str) -> Fraction:
        """E[number of requests (or ticks) labelled ``label``] until the program returns."""
        return self.expected_costs.get(label, Fraction(0))


# ---------------------------------------------------------------------------------------------
# One attempt, explored by replay.
# ---------------------------------------------------------------------------------------------


def _replay(call: tuple, answers: list[int], limits: Limits):
    """Run ``fn(*args)`` feeding the answers; stop at the first unanswered request.

    Returns ("node", request_branches, weight, costs, steps) or ("leaf", end, weight, costs, steps).
    """
    fn, args = call
    gen = fn(*args)
    if not hasattr(gen, "send"):
        raise TypeError(f"{getattr(fn, '__name__', fn)!r} is not a generator function (it must yield requests)")
    weight: Any = 1
    costs: dict[str, int] = {}
    steps: list = []
    depth = 0
    try:
        request = gen.send(None)
        while True:
            if isinstance(request, Tick):
                costs[request.label] = costs.get(request.label, 0) + request.amount
                request = gen.send(None)
                continue
            if not isinstance(request, (Draw, Coin)):
                raise TypeError(
                    f"{getattr(fn, '__name__', fn)!r} yielded {request!r}; yield die/coin/draw/tick requests only"
                )
            options = branches(request)
            if depth == len(answers):
                return ("node", options, weight, costs, steps)
            answer, w = options[answers[depth]]
            weight = weight * w
            costs[request.label] = costs.get(request.label, 0) + 1
            steps.append((request.label, answer))
            depth += 1
            if depth > limits.max_depth:
                raise NotExactError(
                    f"{getattr(fn, '__name__', fn)!r} made more than {limits.max_depth} random requests in one "
                    "attempt; write unbounded loops with RESTART or Recur so they can be solved exactly"
                )
            request = gen.send(answer)
    except StopIteration as stop:
        end = stop.value
        return ("leaf", end, weight, costs, steps)
    finally:
        gen.close()


def _explore_attempt(call: tuple, limits: Limits) -> list[Path]:
    """All leaves of one attempt of ``call`` as Paths (depth-first, in answer order)."""
    leaves: list[Path] = []
    stack: list[list[int]] = [[]]
    while stack:
        answers = stack.pop()
        kind, payload, weight, costs, steps = _replay(call, answers, limits)
        if kind == "leaf":
            if payload is None:
                name = getattr(call[0], "__name__", call[0])
                raise NotExactError(
                    f"{name!r} returned None; return an outcome, RESTART or Recur(...) "
                    "(did you forget a return statement?)"
                )
            leaves.append(Path(tuple(steps), weight, payload, tuple(sorted(costs.items()))))
            if len(leaves) > limits.max_leaves:
                raise NotExactError(f"one attempt has more than {limits.max_leaves} leaves; raise Limits.max_leaves")
        else:
            # push in reverse so the first answer is explored first
            for index in reversed(range(len(payload))):
                stack.append(answers + [index])
    return leaves


def _call_key(fn: Callable, args: tuple, kwargs: dict) -> tuple:
    if kwargs:
        frozen = tuple(sorted(kwargs.items()))
        return (_KwCall(fn, frozen), args)
    return (fn, args)


class _KwCall:
    """A hashable wrapper so a program called with keyword arguments is one chain state."""

    def __init__(self, fn: Callable, kwargs: tuple):
        self.fn, self.kwargs = fn, kwargs
        self.__name__ = getattr(fn, "__name__", repr(fn))

    def __call__(self, *args):
        return self.fn(*args, **dict(self.kwargs))

    def __eq__(self, other):
        return isinstance(other, _KwCall) and (self.fn, self.kwargs) == (other.fn, other.kwargs)

    def __hash__(self):
        return hash((self.fn, self.kwargs))


# ---------------------------------------------------------------------------------------------
# The chain over program calls, solved exactly.
# ---------------------------------------------------------------------------------------------


def _collect_chain(start: tuple, limits: Limits):
    """Explore every program call reachable from ``start``; return per-state summaries."""
    order: list[tuple] = [start]
    index: dict[tuple, int] = {start: 0}
    summaries: list[dict] = []
    i = 0
    while i < len(order):
        call = order[i]
        transitions: dict[int, Any] = {}
        absorb: dict[Hashable, Any] = {}
        cost: dict[str, Any] = {}
        for path in _explore_attempt(call, limits):
            w = path.probability
            for label, amount in path.costs:
                cost[label] = cost.get(label, 0) + w * amount
            end = path.end
            if end is RESTART or isinstance(end, Recur):
                target = call if end is RESTART else end.key
                if target not in index:
                    if len(order) >= limits.max_states:
                        raise NotExactError(
                            f"the program's state space did not close within {limits.max_states} program calls; "
                            "its law cannot be solved exactly with these limits"
                        )
                    index[target] = len(order)
                    order.append(target)
                j = index[target]
                transitions[j] = transitions.get(j, 0) + w
            else:
                absorb[end] = absorb.get(end, 0) + w
        summaries.append({"T": transitions, "A": absorb, "C": cost})
        i += 1
    return order, summaries


def _solve(summaries: list[dict], simplify: Callable[[Any], Any]) -> tuple[dict, dict]:
    """Solve (I - T) h = A and (I - T) k = C for the start state (index 0), exactly."""
    n = len(summaries)
    outcomes: list = []
    seen: set = set()
    labels: list = []
    for s in summaries:
        for x in s["A"]:
            if x not in seen:
                seen.add(x)
                outcomes.append(x)
        for c in s["C"]:
            if c not in labels:
                labels.append(c)
    if n == 1:
        r = summaries[0]["T"].get(0, 0)
        stay = simplify(1 - r)
        if stay == 0:
            raise NotExactError("the program restarts with probability 1: it never returns")
        law = {x: simplify(_divide(w, stay)) for x, w in summaries[0]["A"].items()}
        costs = {c: simplify(_divide(v, stay)) for c, v in summaries[0]["C"].items()}
        return law, costs
    m = len(outcomes) + len(labels)
    # augmented matrix [I - T | A | C]
    rows = []
    for i, s in enumerate(summaries):
        row = [0] * (n + m)
        row[i] = 1
        for j, w in s["T"].items():
            row[j] = row[j] - w
        for a, x in enumerate(outcomes):
            row[n + a] = s["A"].get(x, 0)
        for b, c in enumerate(labels):
            row[n + len(outcomes) + b] = s["C"].get(c, 0)
        rows.append(row)
    for col in range(n):
        pivot = None
        for r in range(col, n):
            if simplify(rows[r][col]) != 0:
                pivot = r
                break
        if pivot is None:
            raise NotExactError(
                "some reachable program state never returns (the chain has a closed loop of restarts); "
                "the program does not halt with probability 1"
            )
        rows[col], rows[pivot] = rows[pivot], rows[col]
        pv = rows[col][col]
        rows[col] = [simplify(_divide(v, pv)) for v in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col]
                rows[r] = [simplify(a - factor * b) for a, b in zip(rows[r], rows[col])]
    start = rows[0]
    law = {x: start[n + a] for a, x in enumerate(outcomes)}
    costs = {c: start[n + len(outcomes) + b] for b, c in enumerate(labels)}
    return law, costs


def _divide(x: Any, y: Any) -> Any:
    """x / y, kept exact when both are plain ints (int / int would make a float in Python)."""
    if isinstance(x, int) and isinstance(y, int):
        return Fraction(x, y)
    return x / y


def _identity(x: Any) -> Any:
    return x


def _run(program: Callable, args: tuple, kwargs: dict, limits: Limits | None, simplify: Callable):
    limits = limits or Limits()
    start = _call_key(program, args, kwargs)
    order, summaries = _collect_chain(start, limits)
    law, costs = _solve(summaries, simplify)
    restart = sum(summaries[0]["T"].values(), 0)
    return law, costs, restart, len(order)


def exact(program: Callable, *args: Any, limits: Limits | None = None, **kwargs: Any) -> ExactResult:
    """Exact outcome law and expected costs of ``program(*args, **kwargs)``.

    Returns an ExactResult whose ``law`` is a Law (Fractions summing to 1) and whose
    ``expected_costs[label]`` is E[number of requests labelled ``label``] until an outcome is
    returned. Raises NotExactError when the program does not halt with probability 1 or exceeds
    ``limits``.
    """
    law, costs, restart, states = _run(program, args, kwargs, limits, _identity)
    total = sum(law.values(), Fraction(0))
    if total != 1:
        raise NotExactError(f"the program halts with probability {total}, not 1")
    return ExactResult(
        law=Law(law, name=f"law of {getattr(program, '__name__', 'program')}"),
        expected_costs={c: Fraction(v) for c, v in costs.items()},
        attempt_restart_probability=Fraction(restart),
        states=states,
    )


def exact_symbolic(program: Callable, *args: Any, limits: Limits | None = None, **kwargs: Any):
    """Like ``exact`` for programs whose coin probabilities are sympy expressions.

    Returns ``(law, expected_costs)`` as dicts of simplified sympy expressions; the weights are
    rational functions of the symbols, checked by the caller (e.g. ``sympy.simplify(a - b) == 0``).
    """
    import sympy

    def simplify(x: Any) -> Any:
        return sympy.factor(sympy.cancel(x)) if hasattr(x, "free_symbols") else x

    law, costs, _, _ = _run(program, args, kwargs, limits, simplify)
    return law, costs


def exact_paths(program: Callable, *args: Any, limits: Limits | None = None, **kwargs: Any) -> list[Path]:
    """Every leaf of *one attempt* of the program, with its answers and exact probability.

    This is the table a lecturer draws on the board (e.g. the two-token world's three paths).
    """
    return _explore_attempt(_call_key(program, args, kwargs), limits or Limits())
