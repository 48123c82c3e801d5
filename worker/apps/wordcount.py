"""WordCount, as in seed 003: split lines, repartition by word, count, emit.

Sub-topology 0 reads the text topic and sends each word, keyed by itself, to the
``counts-store`` repartition topic; sub-topology 1 counts each word in the
``counts-store`` store (changelog ``<application>-counts-store-changelog``) and
emits ``word -> count`` (int64, as Kafka Streams' ``Serdes.Long()``).
"""

from __future__ import annotations

import re

from segue.worker import INT64, STRING, Context, Record, Topology

_NON_WORD = re.compile(r"\W+")


def split(record: Record, ctx: Context) -> None:
    for word in _NON_WORD.split(str(record.value).lower()):
        if word:
            ctx.send("counts-store", word, word)


def count(record: Record, ctx: Context) -> None:
    store = ctx.store("counts-store")
    total = (store.get(record.key) or 0) + 1
    store.put(record.key, total)
    ctx.send("output", record.key, total)


def topology(
    application_id: str = "streams-wordcount",
    input: str = "streams-plaintext-input",
    output: str = "streams-wordcount-output",
) -> Topology:
    app = Topology(application_id)
    text = app.topic(input, key=STRING, value=STRING)
    words = app.repartition("counts-store", key=STRING, value=STRING)
    counts = app.store("counts-store", key=STRING, value=INT64)
    out = app.topic(output, key=STRING, value=INT64, label="output")
    app.subtopology([text], split, sinks=[words])
    app.subtopology([words], count, stores=[counts], sinks=[out])
    return app
