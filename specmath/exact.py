"""The exact interpreter: every branch of a sampling program, weighted with Fractions.

How it works.

1. *One attempt* of a program call is explored depth-first by replay: the shared driver
   (``specmath.driver.run_attempt``) re-runs the generator from the start with a ``ReplayHandler``
   that answers with a prescribed list of branch indices; at the first request past them each of
   its branches (answer, probability) is pushed. A leaf ends with an outcome, RESTART or Recur, and
   its probability is the product of the probabilities of the answers on the way.
2. Program calls reached through RESTART/Recur are states of an absorbing Markov chain. For state
   i, with T[i][j] the probability that one attempt of i continues as j, A[i][x] the probability
   that it returns x, and C[i][c] the expected cost c of one attempt,

       h_i(x) = A[i][x] + sum_j T[i][j] h_j(x)         (law of the final outcome)
       k_i(c) = C[i][c] + sum_j T[i][j] k_j(c)         (expected total cost)

   i.e. (I - T) h = A and (I - T) k = C, solved over the rationals (``specmath.absorbing_chain``).
   For a plain restart loop (one state, T = r) this is the familiar h = A / (1 - r).
3. The answer is exact or it is an error: a program that does not halt with probability 1, whose
   attempt is deeper than ``max_depth`` requests, or whose chain does not close within
   ``max_states`` states raises ``NotExactError``. Nothing is truncated silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from specmath.absorbing_chain import ChainState, solve_chain
from specmath.driver import Call, NotExactError, run_attempt
from specmath.laws import Law
from specmath.program import Coin, Draw

__all__ = ["NotExactError", "Limits", "ExactResult", "Path", "ReplayHandler", "exact", "exact_paths", "exact_symbolic"]


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
# One attempt, explored by replay: the handler that answers with prescribed branches.
# ---------------------------------------------------------------------------------------------


def branches(request: Draw | Coin) -> list[tuple[Any, Any]]:
    """The (answer, probability) pairs of a request, zero-probability answers left out.

    Leaving out probability-0 answers matters: a branch that cannot happen must not be explored
    (it could divide by zero, e.g. a residual law when p == q). A Draw's pairs are kept with its law
    (``Law.derived``), so a law requested again and again is scanned once.
    """
    if isinstance(request, Draw):
        return request.law.derived("branches", _positive_items)
    p = request.p
    return [(a, w) for a, w in ((True, p), (False, 1 - p)) if not _is_zero(w)]


def _positive_items(law: Law) -> list[tuple[Any, Any]]:
    return [(x, w) for x, w in law.items() if w != 0]


def _is_zero(w: Any) -> bool:
    if isinstance(w, (int, Fraction)):
        return w == 0
    return bool(w == 0)  # a sympy expression: 0 only when it simplifies to the number 0


class Unexplored(Exception):
    """Raised by ``ReplayHandler`` at the first request past its prescribed answers, with its branches."""

    def __init__(self, options: list) -> None:
        super().__init__("unexplored request")
        self.options = options


class ReplayHandler:
    """Answers each request with the prescribed branch index; keeps the path's probability and steps.

    At the first request past the indices it raises ``Unexplored``: the attempt stops there, and the
    explorer pushes one extended prefix per branch (Pyro's ``queue`` enumeration).
    """

    def __init__(self, indices: list[int], call: Call, max_depth: int) -> None:
        self.indices, self.call, self.max_depth = indices, call, max_depth
        self.weight: Any = 1
        self.steps: list = []

    def answer(self, request: Draw | Coin) -> Any:
        options = branches(request)
        depth = len(self.steps)
        if depth == len(self.indices):
            raise Unexplored(options)
        answer, w = options[self.indices[depth]]
        self.weight = self.weight * w
        self.steps.append((request.label, answer))
        if depth + 1 > self.max_depth:
            raise NotExactError(
                f"{self.call.name!r} made more than {self.max_depth} random requests in one "
                "attempt; write unbounded loops with RESTART or Recur so they can be solved exactly"
            )
        return answer


def _explore_attempt(call: Call, limits: Limits) -> list[Path]:
    """All leaves of one attempt of ``call`` as Paths (depth-first, in answer order)."""
    leaves: list[Path] = []
    stack: list[list[int]] = [[]]
    while stack:
        indices = stack.pop()
        handler = ReplayHandler(indices, call, limits.max_depth)
        costs: dict[str, int] = {}
        try:
            end = run_attempt(call, handler, costs)
        except Unexplored as node:
            # push in reverse so the first answer is explored first
            stack.extend(indices + [index] for index in reversed(range(len(node.options))))
            continue
        if end is None:
            raise NotExactError(
                f"{call.name!r} returned None; return an outcome, RESTART or Recur(...) "
                "(did you forget a return statement?)"
            )
        leaves.append(Path(tuple(handler.steps), handler.weight, end, tuple(sorted(costs.items()))))
        if len(leaves) > limits.max_leaves:
            raise NotExactError(f"one attempt has more than {limits.max_leaves} leaves; raise Limits.max_leaves")
    return leaves


# ---------------------------------------------------------------------------------------------
# Every program call reached, as the states of an absorbing chain (solved in absorbing_chain).
# ---------------------------------------------------------------------------------------------


def _collect_chain(start: Call, limits: Limits) -> list[ChainState]:
    """Explore every program call reachable from ``start`` through RESTART / Recur; one state each."""
    order: list[Call] = [start]
    index: dict[Call, int] = {start: 0}
    states: list[ChainState] = []
    for call in order:  # grows while it is walked: each new call is explored in its turn
        state = ChainState()
        for path in _explore_attempt(call, limits):
            w = path.probability
            for label, amount in path.costs:
                state.costs[label] = state.costs.get(label, 0) + w * amount
            following = call.after(path.end)
            if following is None:
                state.returns[path.end] = state.returns.get(path.end, 0) + w
                continue
            if following not in index:
                if len(order) >= limits.max_states:
                    raise NotExactError(
                        f"the program's state space did not close within {limits.max_states} program calls; "
                        "its law cannot be solved exactly with these limits"
                    )
                index[following] = len(order)
                order.append(following)
            j = index[following]
            state.continues[j] = state.continues.get(j, 0) + w
        states.append(state)
    return states


def _identity(x: Any) -> Any:
    return x


def _run(program: Callable, args: tuple, kwargs: dict, limits: Limits | None, simplify: Callable):
    states = _collect_chain(Call.of(program, args, kwargs), limits or Limits())
    law, costs = solve_chain(states, simplify)
    return law, costs, states[0].restart_probability(), len(states)


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
    return _explore_attempt(Call.of(program, args, kwargs), limits or Limits())
