"""The Kafka Streams side of bench/kstreams: its JSON lines parse into the events the
driver measures by, anything else is refused by name, and the measures follow from them."""

from __future__ import annotations

import pytest

from bench.kstreams.events import (
    STABLE,
    UNSTABLE,
    BadLine,
    RestoreEvent,
    TaskEvent,
    assignor_verdict,
    held,
    is_error,
    last_change,
    parse_line,
    peak_stateful,
    restored_records,
)
from bench.kstreams.measure import Seen, input_times, lateness


def tasks(t: int, *active: str, standby: tuple[str, ...] = ()) -> TaskEvent:
    line = (
        f'{{"event":"tasks","t":{t},"state":"RUNNING","active":{list(active)},'
        f'"standby":{list(standby)}}}'
    ).replace("'", '"')
    event = parse_line(line)
    assert isinstance(event, TaskEvent)
    return event


def test_a_tasks_line_as_the_java_instance_prints_it() -> None:
    line = (
        '{"event":"tasks","t":1700000000123,"state":"RUNNING",'
        '"active":["0_1","1_1","1_4"],"standby":["1_2"]}'
    )
    event = parse_line(line)
    assert event == TaskEvent(
        event="tasks",
        t=1700000000123,
        state="RUNNING",
        active=("0_1", "1_1", "1_4"),
        standby=("1_2",),
    )
    assert isinstance(event, TaskEvent)
    assert event.stateful_active == 2


def test_a_restored_line() -> None:
    line = '{"event":"restored","t":5,"kind":"standby","partition":3,"records":1000}'
    assert parse_line(line) == RestoreEvent(
        event="restored", t=5, kind="standby", partition=3, records=1000
    )


@pytest.mark.parametrize(
    "line",
    [
        "[main] WARN org.apache.kafka.streams.KafkaStreams - something",
        '{"event":"tasks","t":1}',
        '{"event":"restored","t":1,"kind":"warmup","partition":0,"records":1}',
        '{"event":"moved","t":1}',
        "[1, 2]",
    ],
)
def test_anything_else_is_refused_with_the_line(line: str) -> None:
    with pytest.raises(BadLine, match=r"line|event|object") as info:
        parse_line(line)
    assert line[:20] in str(info.value)


def test_the_assignors_verdicts() -> None:
    prefix = "[StreamThread-1] INFO o.a.k.s.p.i.StreamsPartitionAssignor - stream-thread [x] "
    assert assignor_verdict(prefix + STABLE + ".") is True
    assert assignor_verdict(prefix + UNSTABLE + ".") is False
    assert assignor_verdict(prefix + "Assigned tasks [0_0] to clients as: ...") is None


def test_errors_are_error_lines_and_exceptions_not_info_lines_that_name_one() -> None:
    at = "17:47:25.190 [StreamThread-1] "
    assert is_error(at + "ERROR o.a.k.s.KafkaStreams - stream-client [x] crashed")
    assert is_error("java.lang.IllegalStateException: boom")
    assert is_error("\tat org.apache.kafka.streams.Foo(Exception.java:1)")
    assert not is_error(
        at + "INFO o.a.k.c.c.i.ConsumerCoordinator - Request joining group due to: rebalance "
        "failed due to 'The group is rebalancing' (RebalanceInProgressException)"
    )
    assert not is_error(at + "INFO o.a.k.c.c.i.ConsumerCoordinator - (Re-)joining group")


def test_balance_peak_and_restores_from_an_instances_reports() -> None:
    events = [
        tasks(1000, "0_0", "1_0", "1_1", "1_2"),
        tasks(5000, "0_0", "1_0", "1_1", "1_2", "1_3"),  # took one more: a peak of 4
        tasks(6000, "0_0", "1_0", "1_1", "1_2", "1_3"),  # a state change, the same tasks
        tasks(9000, "0_0", "1_0", "1_1"),
    ]
    assert last_change(events) == 9.0
    assert last_change(events[:1]) == 1.0
    assert last_change([]) is None
    assert peak_stateful(events, since=2.0) == 4
    assert peak_stateful(events, since=9.5) == 2  # what it held then
    restores = [
        RestoreEvent(event="restored", t=1000, kind="standby", partition=1, records=500),
        RestoreEvent(event="restored", t=3000, kind="standby", partition=1, records=200),
        RestoreEvent(event="restored", t=4000, kind="active", partition=3, records=7),
    ]
    assert restored_records(restores, since=2.0) == {1: 200, 3: 7}
    # a copy the instance already held (here 1_1, from its report before 2 s) is not restored
    assert held(events, since=2.0) == {"0_0", "1_0", "1_1", "1_2"}
    assert restored_records(restores, since=2.0, old=held(events, 2.0)) == {3: 7}
    assert held(events, since=0.5) == set()


def count(n: int) -> bytes:
    return n.to_bytes(8, "big", signed=True)


def test_lateness_matches_each_count_to_its_words_line() -> None:
    inputs = [Seen(0, b"a", b"a", t, t) for t in (10.0, 20.0, 30.0, 31.9)]
    inputs.append(Seen(1, b"b", b"b", 21.0, 21.0))
    outputs = [
        Seen(0, b"a", count(1), 0, 10.1),  # before the steady input began
        Seen(0, b"a", count(2), 0, 20.2),
        Seen(0, b"a", count(3), 0, 32.5),  # 2.5 s after its line: late, and a 12.3 s gap
        Seen(0, b"a", count(4), 0, 32.6),
        Seen(1, b"b", count(1), 0, 21.1),
    ]
    result = lateness(outputs, input_times(inputs), start=15.0, scaled=25.0, end=40.0)
    assert result.late == 1
    assert result.counted == 2  # the lines written after the scale request
    assert result.pauses[0] == pytest.approx((12.3, 32.5))
    assert result.pauses[1] == (0.0, 25.0)  # no gap ends after the scale request
