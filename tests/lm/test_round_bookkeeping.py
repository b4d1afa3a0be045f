"""One host transfer per round, read back by name; the round's counters; runs combined; the one stopwatch."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")

from specmath.lm.accept_reject import AcceptReject  # noqa: E402
from specmath.lm.drafts import Proposal  # noqa: E402
from specmath.lm.generation import Generation, combined  # noqa: E402
from specmath.lm.host_transfer import read_together  # noqa: E402
from specmath.lm.round_bookkeeping import count_round, read_round  # noqa: E402
from specmath.lm.stopwatch import Stopwatch, timed_by  # noqa: E402


@dataclass(frozen=True)
class _Read:
    ids: list[int]
    table: list[list[int]]
    ok: bool
    total: float


def test_read_together_gives_each_tensor_back_by_name_with_its_shape_and_type():
    read = read_together(_Read, total=torch.tensor(0.25), ok=torch.tensor(True),
                         ids=torch.tensor([3, 2**40 + 1]), table=torch.tensor([[1, 2], [3, 4], [5, 6]]))
    assert read == _Read(ids=[3, 2**40 + 1], table=[[1, 2], [3, 4], [5, 6]], ok=True, total=0.25)
    assert type(read.ids[0]) is int and type(read.ok) is bool
    with pytest.raises(TypeError, match="needs"):
        read_together(_Read, ids=torch.tensor([1]))


def test_one_round_is_read_and_counted_by_name():
    # batch of 2, width 3: row 0 proposed 3 and accepted 1, row 1 proposed 2 and accepted 2 (then the bonus)
    V = 4
    p = torch.full((2, 4, V), 1 / V, dtype=torch.float64)
    q = torch.zeros(2, 3, V, dtype=torch.float64)
    q[..., 0] = 1.0  # q puts everything on token 0: alpha_i = min(p, q) summed = 1/4 at every position
    proposal = Proposal(torch.tensor([[0, 0, 0], [0, 0, 0]]), [3, 2], torch.tensor([3, 2]), q)
    result = AcceptReject(torch.tensor([1, 2]), torch.tensor([3, 1]), torch.ones(2, 3), torch.tensor([False, False]))
    record = read_round(p, proposal, result, torch.zeros(2, 4, V))
    assert record.emitted(0) == [0, 3] and record.emitted(1) == [0, 0, 1]
    # reached: position 0 by both rows, 1 by both (row 0 accepted 1, row 1 accepted 2), 2 by nobody
    # (row 0 stopped at 1, row 1 proposed only 2); accepted: position 0 by both, 1 by row 1
    assert (record.reached, record.accepted, record.alpha_count) == ([2, 2, 0], [2, 1, 0], 4)
    assert record.alpha_sum == 4 * 0.25 and record.logits_ok
    out = Generation([[], []])
    count_round(out, record, proposal.lengths, draft_steps=3)
    assert (out.rounds, out.accepted_hist, out.width_hist, out.drafted, out.draft_steps) == (1, [0, 1, 1], [0, 0, 0, 1], 5, 3)
    assert (out.position_reached, out.position_accepted) == ([2, 2, 0], [2, 1, 0])
    bad = read_round(p, proposal, result, torch.full((2, 4, V), float("nan")))
    assert not bad.logits_ok


def test_combined_runs_add_their_counters_and_keep_their_rows():
    a = Generation([[1, 2]], rounds=2, accepted_hist=[1, 1], width_hist=[0, 2], alpha_sum=0.5, alpha_count=1,
                   profile={"draft": 1.0})
    b = Generation([[3]], rounds=1, accepted_hist=[0, 0, 1], width_hist=[1], alpha_sum=0.25, alpha_count=1,
                   profile={"draft": 2.0})
    both = combined([a, b])
    assert both.tokens == [[1, 2], [3]] and both.rounds == 3
    assert both.accepted_hist == [1, 1, 1] and both.width_hist == [1, 2]
    assert (both.alpha_sum, both.alpha_count, both.profile) == (0.75, 2, {"draft": 3.0})
    assert a.accepted_hist == [1, 1]  # the runs themselves are left alone


def test_the_stopwatch_adds_laps_by_part_and_a_disabled_one_reads_nothing():
    watch = Stopwatch("cpu")
    assert watch.time("work", lambda: 7) == 7
    first = watch.lap("other")
    watch.lap("work")
    assert set(watch.seconds) == {"work", "other"} and min(watch.seconds.values()) >= 0 and first >= 0
    assert watch.total == sum(watch.seconds.values())
    off = Stopwatch("cpu", parts=("a",), enabled=False)
    assert off.lap("a") == 0.0 and off.seconds == {"a": 0.0}


def test_a_stopwatch_reads_the_clock_of_the_block_it_is_made_in_and_the_cpu_clock_skips_a_sleep():
    import time

    with timed_by("cpu"):
        cpu = Stopwatch("cpu")
        with timed_by("wall"):
            assert Stopwatch("cpu").clock == "wall"
        assert Stopwatch("cpu").clock == "cpu" and Stopwatch("cpu", clock="wall").clock == "wall"
    wall = Stopwatch("cpu")
    assert (cpu.clock, wall.clock) == ("cpu", "wall")
    cpu.restart()
    wall.restart()
    time.sleep(0.2)
    # a sleeping process runs on no CPU: the CPU clock's lap is its few microseconds of work, however busy the
    # machine (0.1 s leaves room for a slow start of the sleep); the wall's lap is at least the sleep
    assert cpu.lap("sleep") < 0.1 <= 0.2 <= wall.lap("sleep")
    with pytest.raises(ValueError, match="clock 'gpu': one of wall, cpu"):
        with timed_by("gpu"):
            pass
    with pytest.raises(ValueError, match="clock 'gpu': one of wall, cpu"):
        Stopwatch(clock="gpu")
