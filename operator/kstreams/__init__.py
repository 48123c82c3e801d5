"""The operator's side of ``runtime: kafka-streams`` (docs/kafka-streams.md).

A Kafka Streams app runs the same observe → decide → act loop as a Segue app, with three
differences kept here so the scaling core stays one: what the group is and the tasks it
has come from the plugin's group report (:mod:`.group`), what each pod holds from its
agent's page and the plugin's last outcome (:mod:`.pods`), and every generation is also
an answer to the group's latest report, since Kafka Streams applies a placement only at a
rebalance (:mod:`.answer`). ``segue.operator.world`` and ``reconcile`` call these.
"""
