"""The embedded local stack: real Apache Kafka, a real Kubernetes control plane
and a pod runner that plays the kubelet, all on 127.0.0.1.

The test harness (session-scoped fixtures in tests/conftest.py) and ``make demo``
start it through :class:`LocalStack`. Binaries come from ``stack/install/*.sh``
(run by ``make``), cached under ``$SEGUE_CACHE``. Module map:

- ``paths``: where the cache and the pinned binaries are;
- ``process``: one supervised child process (start, wait ready, stop, log tail);
- ``kafka``: one KRaft node (alone, a single-node cluster);
- ``cds``: the class data sharing archive every Kafka JVM maps, made by ``make stack``;
- ``kafka_cluster``: several nodes as one replicated cluster (``--brokers 3``);
- ``kafka_secure`` and ``kafka_acls``: a node that authenticates (SASL_SSL, SCRAM) and
  authorizes (ACLs), and the ACLs an app and the operator need;
- ``kafka_proxied`` and ``toxiproxy``: a broker reached through a real TCP proxy, for
  the network fault (tests/faults/test_network.py);
- ``prometheus``: the pinned Prometheus server and promtool (the chart's alerts);
- ``certs`` and ``kube``: etcd, kube-apiserver, kube-controller-manager, kubeconfig;
- ``kubelet/``: the pod runner;
- ``localstack``: all of it together, with the order and the teardown.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from segue.stack.kafka import KafkaBroker
    from segue.stack.kafka_cluster import KafkaCluster
    from segue.stack.kube import KubeControlPlane
    from segue.stack.localstack import LocalStack
    from segue.stack.process import StackError
else:
    from segue.protocol.lazy import exports

    # Each name loads its module on first use (PEP 562): ``segue stack`` imports
    # ``segue.stack.cli``, and ``segue --help`` must not load the stack (YAML,
    # cryptography, ...) with it.
    __getattr__ = exports(
        __name__,
        {
            "kafka": ("KafkaBroker",),
            "kafka_cluster": ("KafkaCluster",),
            "kube": ("KubeControlPlane",),
            "localstack": ("LocalStack",),
            "process": ("StackError",),
        },
    )


__all__ = ["KafkaBroker", "KafkaCluster", "KubeControlPlane", "LocalStack", "StackError"]
